"""Broken and hostile intents through the command line: each ends with exit 1 (2 for a usage error), one message
naming the file, line, field, value and what is valid, no traceback, and nothing written.

Each case is a row of :data:`CASES`: the intent's bytes (derived from tests/fixtures/intents/valid/minimal.yml),
the exit status and fragments the message must hold. Limits and their figures: docs/intent-limits.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from hwaac import cli
from hwaac.model.limits import MAX_BYTES, MAX_DEPTH, MAX_NODES

REPO = Path(__file__).parents[2]
MINIMAL = (REPO / "tests" / "fixtures" / "intents" / "valid" / "minimal.yml").read_text()


def edit(old: str, new: str) -> bytes:
    """The minimal intent with ``old`` replaced by ``new`` (``old`` must occur)."""
    assert old in MINIMAL, old
    return MINIMAL.replace(old, new, 1).encode()


def alias_bomb(levels: int = 9) -> bytes:
    """ "Billion laughs": each anchor lists the previous one ten times, so 10**levels values from ~500 bytes."""
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, levels + 1)]
    return (MINIMAL + "\n".join(lines) + "\n").encode()


@dataclass(frozen=True)
class Case:
    id: str
    content: bytes | None  # None: fabric.yml is a folder
    exit: int
    fragments: tuple[str, ...]  # each must appear in stderr
    line: int | None = None  # the line the message must name (file:line)


CASES = [
    Case("binary", bytes(range(256)) * 4, 1, ("not UTF-8", "byte 0x80 at offset 128", "valid: a UTF-8 text file")),
    Case(
        "latin-1",
        MINIMAL.replace("site: lab", "site: caf\xe9").encode("latin-1"),
        1,
        ("not UTF-8", "0xe9", "save it as UTF-8"),
        line=4,
    ),
    Case("folder", None, 1, ("is a folder", "valid: a YAML file")),
    Case("nul-byte", edit("name: tiny", "name: ti\0ny"), 1, ("control character U+0000 at column 11",), line=3),
    Case("escape-sequence", edit("site: lab", "site: \x1b[31mlab"), 1, ("control character U+001B",), line=4),
    Case(
        "too-large",
        (MINIMAL + ("# " + "x" * 78 + "\n") * (MAX_BYTES // 80 + 1)).encode(),
        1,
        ("file too large", f"at most {MAX_BYTES} bytes"),
    ),
    Case(
        "deep-brackets", edit("site: lab", "site: " + "[" * 5000 + "]" * 5000), 1, ("not valid YAML", "nesting"), line=4
    ),
    Case(
        "nested-past-limit",
        edit("site: lab", "site: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)),
        1,
        ("nested too deeply", f"at most {MAX_DEPTH}"),
        line=4,
    ),
    Case("alias-bomb", alias_bomb(), 1, ("too many YAML values", f"at most {MAX_NODES}")),
    Case("yaml-syntax", edit("site: lab", "site: [unclosed"), 1, ("not valid YAML",)),
    # strict types: YAML's true is not 1, "1" is not 1, 2.0 is not the choice 2
    Case(
        "bool-for-int",
        edit("su_count: 1", "su_count: true"),
        1,
        ("fabric.su_count: invalid value (got True); valid: a valid integer",),
        line=7,
    ),
    Case(
        "string-for-int",
        edit("su_count: 1", 'su_count: "1"'),
        1,
        ("fabric.su_count: invalid value (got '1'); valid: a valid integer",),
        line=7,
    ),
    Case(
        "bool-for-choice",
        edit("rails: 2", "rails: 2\n  tiers: true"),
        1,
        ("fabric.tiers: invalid value (got True); valid: 2 or 3",),
        line=6,
    ),
    Case(
        "float-for-choice",
        edit("rails: 2", "rails: 2\n  planes: 1.0"),
        1,
        ("fabric.planes: invalid value (got 1.0); valid: 1, 2 or 4",),
        line=6,
    ),
    Case(
        "int-beyond-64-bits",
        edit("switches:", "host:\n  mlxconfig: {LINK_TYPE_P1: 99999999999999999999999}\nswitches:"),
        1,
        ("does not fit in 64 bits",),
        line=9,
    ),
    Case(
        "int-for-string",
        edit("site: lab", "site: 7"),
        1,
        ("fabric.site: invalid value (got 7); valid: a valid string",),
        line=4,
    ),
    # names: device names are host names, interface names Linux's, patterns only fill in their fields
    Case(
        "path-traversal",
        edit("switches:", 'naming:\n  leaf: "../../x-{su}-{rail}"\nswitches:'),
        1,
        ("naming.leaf: makes the device name '../../x-1-0'", "valid: a host name"),
        line=9,
    ),
    Case(
        "index-access",
        edit("switches:", 'naming:\n  leaf: "l-{su}-{rail[0]}"\nswitches:'),
        1,
        ("naming.leaf: bad naming pattern: attribute or index access {rail[0]}",),
        line=9,
    ),
    Case(
        "attribute-access",
        edit("switches:", 'naming:\n  spine: "s-{index.__class__}"\nswitches:'),
        1,
        ("naming.spine: bad naming pattern: attribute or index access {index.__class__}", "{plane}, {pod}, {index}"),
        line=9,
    ),
    Case(
        "conversion",
        edit("switches:", 'naming:\n  node: "n-{su}-{slot!r}"\nswitches:'),
        1,
        ("naming.node: bad naming pattern: conversion !r",),
        line=9,
    ),
    Case(
        "format-spec",
        edit("switches:", 'naming:\n  node: "n-{su}-{slot:>99}"\nswitches:'),
        1,
        ("naming.node: bad naming pattern: format spec {slot:>99}", "{slot:02d}"),
        line=9,
    ),
    Case(
        "unbalanced-brace",
        edit("switches:", 'naming:\n  node: "n-{su"\nswitches:'),
        1,
        ("naming.node: bad naming pattern: not a format pattern",),
        line=9,
    ),
    Case(
        "field-of-another-role",
        edit("switches:", 'naming:\n  super_spine: "ss-{su}"\nswitches:'),
        1,
        ("naming.super_spine: bad naming pattern: unknown field {su}; fields: {plane}, {index}",),
        line=9,
    ),
    Case(
        "appliance-with-space",
        edit("su_count: 1", "su_count: 1\n  appliances: [{name: ufm 1, su: 1, slot: 4, rails: [0]}]"),
        1,
        ("fabric.appliances[0].name: invalid value (got 'ufm 1'); valid: a host name",),
        line=8,
    ),
    Case(
        "appliance-non-ascii",
        edit("su_count: 1", "su_count: 1\n  appliances: [{name: ufm-\u00e9, su: 1, slot: 4, rails: [0]}]"),
        1,
        ("fabric.appliances[0].name: invalid value", "valid: a host name"),
        line=8,
    ),
    Case(
        "appliance-name-long",
        edit("su_count: 1", "su_count: 1\n  appliances: [{name: " + "u" * 500_000 + ", su: 1, slot: 4, rails: [0]}]"),
        1,
        ("fabric.appliances[0].name: invalid value (got 'uuuu", "u…(500002 chars)); valid: a host name"),
        line=8,
    ),
    Case(
        "interface-name-too-long",
        edit("switches:", 'host:\n  interface_name: "roce-backend-rail{rail}"\nswitches:'),
        1,
        ("host.interface_name: makes the name 'roce-backend-rail0': 18 characters", "more than Linux's 15"),
        line=9,
    ),
    Case(
        "port-pattern-field",
        edit(
            "switches:",
            "switch_models:\n  X: {hwsku: X, ports: 8, port_speed_gbps: 400, port_name: 'Ethernet{port}'}\nswitches:",
        ),
        1,
        ("switch_models.X.port_name: bad pattern: unknown field {port}; fields: {n}",),
        line=9,
    ),
    # size: a fabric that fits the radix but not memory and disk fails before anything is enumerated
    Case(
        "million-sus",
        (REPO / "tests/fixtures/intents/invalid/fabric-too-large.yml").read_bytes(),
        1,
        ("fabric.su_count: the fabric is too large to plan: 2,000,979 devices (limit 65,536)",),
        line=10,
    ),
    Case(
        "site-not-a-slug",
        edit("site: lab", "site: my lab"),
        1,
        ("fabric.site: invalid value (got 'my lab'); valid: a NetBox slug",),
        line=4,
    ),
]


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse
        code = int(exc.code or 0)
    _, err = capsys.readouterr()
    return code, err


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
@pytest.mark.parametrize("command", ["validate", "plan"])
def test_hostile_intent_is_refused_cleanly(case: Case, command: str, tmp_path: Path, capsys):
    fabric = tmp_path / "in" / "fabric.yml"
    if case.content is None:
        fabric.mkdir(parents=True)
    else:
        fabric.parent.mkdir()
        fabric.write_bytes(case.content)
    before = _files(tmp_path)
    argv = [command, str(fabric.parent)] + (["-o", str(tmp_path / "out"), "--no-progress"] if command == "plan" else [])
    code, err = _run(capsys, argv)
    assert code == case.exit, err
    assert "Traceback" not in err
    for fragment in case.fragments:
        assert fragment in err, f"{fragment!r} not in:\n{err}"
    where = f"{fabric}:{case.line}: " if case.line else f"{fabric}"
    assert where in err, err
    assert _files(tmp_path) == before, "a refused intent wrote files"


# --against OLD: a file that is not a plan.json of hwaac is a usage error (exit 2), before anything is written
AGAINST = [
    ("json-list", b"[1, 2]", "not an hwaac plan: expected format 'hwaac-plan/1', got 'list'"),
    ("not-json", b"{", "not JSON"),
    (
        "section-list",
        b'{"format": "hwaac-plan/1", "switches": [1, 2]}',
        "not an hwaac plan: 'switches' is a list, expected an object of name -> entry",
    ),
    (
        "entry-not-object",
        b'{"format": "hwaac-plan/1", "nodes": {"n1": 7}}',
        "not an hwaac plan: nodes.n1 is an int, expected an object",
    ),
    (
        "link-ends",
        b'{"format": "hwaac-plan/1", "links": {"H1": {"a": [1], "b": []}}}',
        "not an hwaac plan: links.H1.a is '[1]', expected [device, port, address]",
    ),
    (
        "storage-list",
        b'{"format": "hwaac-plan/1", "storage": []}',
        "not an hwaac plan: 'storage' is a list, expected an object or null",
    ),
    (
        "storage-deep",
        b'{"format": "hwaac-plan/1", "storage": ' + b'{"a": ' * 40 + b"1" + b"}" * 41,
        "not an hwaac plan: 'storage' is nested deeper than 32 levels",
    ),
]


@pytest.mark.parametrize(("content", "fragment"), [a[1:] for a in AGAINST], ids=[a[0] for a in AGAINST])
def test_against_a_file_that_is_not_a_plan_is_a_usage_error(content: bytes, fragment: str, tmp_path: Path, capsys):
    (tmp_path / "fabric.yml").write_text(MINIMAL)
    (tmp_path / "old.json").write_bytes(content)
    before = _files(tmp_path)
    code, err = _run(
        capsys,
        ["plan", str(tmp_path), "-o", str(tmp_path / "out"), "--against", str(tmp_path / "old.json"), "--no-progress"],
    )
    assert code == 2 and "Traceback" not in err
    assert f"{tmp_path / 'old.json'}: {fragment}" in err, err
    assert _files(tmp_path) == before


def test_against_a_device_file_is_refused_without_reading_it(tmp_path: Path, capsys):
    (tmp_path / "fabric.yml").write_text(MINIMAL)
    code, err = _run(capsys, ["plan", str(tmp_path), "-o", str(tmp_path / "out"), "--against", "/dev/zero"])
    assert code == 2 and "/dev/zero: not a regular file" in err


@pytest.mark.parametrize("pattern", ["../../x-{su}-{rail}", "/tmp/x-{su}-{rail}", "a/../../x{su}{rail}"])
def test_render_refuses_a_device_name_that_leaves_the_output_folder(pattern: str, tmp_path: Path):
    """Defence in depth: a plan built in code, without the naming rules, still writes nothing outside -o."""
    from ruamel.yaml import YAML

    from hwaac.model.intent import Intent
    from hwaac.plan import build_plan
    from hwaac.render import OutputDirError, render_to_dir

    data = YAML(typ="safe").load(MINIMAL)
    data["naming"] = {"leaf": pattern}
    plan = build_plan(Intent.model_validate(data), validate=False)
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    with pytest.raises(OutputDirError, match="not a path inside"):
        render_to_dir(plan, work / "out")
    assert _files(tmp_path) == {"a", "a/b"}


def _derive(fabric: dict, switches: dict):
    from ruamel.yaml import YAML

    from hwaac.model.intent import Intent
    from hwaac.plan.design import derive

    data = YAML(typ="safe").load(MINIMAL)
    data["fabric"].update(fabric)
    data["switches"].update(switches)
    return derive(Intent.model_validate(data))


# fabric and switches over the minimal intent (2 rails, 4-port leaves' worth of uplinks on SN5600-O128), the field
# the hint must name
CAPACITY = [
    ("2-tier", {"su_count": 100}, {}, "fabric.su_count"),
    ("2-tier-capacity", {"su_capacity": 100}, {}, "fabric.su_capacity"),
    (
        "2-tier-per-plane",
        {"su_count": 100},
        {"spine": {"model": "SN5600-O128", "per_plane": 2}},
        "switches.spine.per_plane",
    ),
    (
        "3-tier",
        {"tiers": 3, "su_count": 500},
        {"spine": {"model": "SN5600-O128", "sus_per_pod": 1}, "super_spine": {"model": "SN5600-O128"}},
        "fabric.su_count",
    ),
    (
        "3-tier-per-group",
        {"tiers": 3, "su_count": 100},
        {"spine": {"model": "SN5600-O128", "sus_per_pod": 1}, "super_spine": {"model": "SN5600-O128", "per_group": 16}},
        "switches.super_spine.per_group",
    ),
]


@pytest.mark.parametrize(("fabric", "switches", "field"), [c[1:] for c in CAPACITY], ids=[c[0] for c in CAPACITY])
def test_capacity_hint_is_the_real_maximum_and_names_the_field_written(fabric: dict, switches: dict, field: str):
    import re

    from hwaac.plan.design import DesignError

    with pytest.raises(DesignError) as info:
        _derive(fabric, switches)
    issue = info.value.issues[0]
    assert issue.path == field
    most = int(re.search(r"at most (\d+) SUs", issue.valid).group(1))
    size = {k: v for k, v in fabric.items() if k not in ("su_count", "su_capacity")}
    assert _derive({**size, "su_count": most}, switches).su_capacity == most  # the hint fits
    with pytest.raises(DesignError):
        _derive({**size, "su_count": most + 1}, switches)  # and one more does not


def test_fabric_size_counts_what_the_plan_holds():
    """The size limits are checked from the dimensions; they must count what the plan enumerates (nodes: every
    slot plus the appliances, an upper bound when fabric.nodes leaves slots empty or appliances use fewer
    rails)."""
    from hwaac.plan import build_plan
    from hwaac.plan.rules import fabric_size
    from hwaac.validate import load_intent

    paths = [
        *(REPO / "tests/fixtures/intents/valid").glob("*.yml"),
        *(REPO / "inventory").glob("*/fabric.yml"),
        *(REPO / "inventory/examples").glob("*/fabric.yml"),
    ]
    for path in paths:
        plan = build_plan(load_intent(path))
        size = fabric_size(plan.intent, plan.design)
        f = plan.intent.fabric
        slots = f.su_count * f.nodes_per_su + len(f.appliances)
        assert size["devices"] - slots == len(plan.switches), path
        assert size["devices"] >= len(plan.switches) + len(plan.nodes), path
        full = f.nodes is None and not f.appliances  # appliances may use fewer rails
        assert size["links"] >= len(plan.links) and (size["links"] == len(plan.links)) == full, path
