"""Property-based fuzzing of ``hwaac validate`` and ``hwaac plan`` with intents that are wrong in every way.

Two generators: intents derived from valid ones by mutating fields the schema names (:class:`hwaac.model.intent
.Intent` walked for every field path, values of the field's type near its bounds, of other types, or hostile
strings: patterns with attribute access, path traversal, control characters, megabyte names), and raw bytes
(random, or the minimal intent with bytes spliced in). Each example runs the CLI's ``main`` in-process on a file
in a fresh folder and asserts: exit 0 or 1, no exception, no traceback, at most ``DEADLINE_S`` seconds, nothing
written outside ``-o`` and, on exit 1, nothing written at all.

The suite runs the ``intent-fuzz`` profile (60 examples per test); ``make fuzz`` runs ``intent-fuzz-long``
(3,000) by setting ``HWAAC_FUZZ_PROFILE``.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import tempfile
import time
import typing
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from hwaac import cli
from hwaac.model.intent import Intent

REPO = Path(__file__).parents[2]
MINIMAL = (REPO / "tests" / "fixtures" / "intents" / "valid" / "minimal.yml").read_text()
DEADLINE_S = 60.0  # per example, on a busy 2-core machine; a bound against runaway time, not a benchmark

_common = {
    "deadline": None,
    "derandomize": False,
    "print_blob": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
settings.register_profile("intent-fuzz", max_examples=60, **_common)
settings.register_profile("intent-fuzz-long", max_examples=3000, **_common)
FUZZ = settings.get_profile(os.environ.get("HWAAC_FUZZ_PROFILE", "intent-fuzz"))

# a small 3-tier intent (derived from tests/fixtures/intents/invalid/super-spines-do-not-fit.yml: per_group left to
# its default, pools widened)
THREE_TIER = {
    "fabric": {"name": "tiny3", "site": "lab", "tiers": 3, "rails": 2, "nodes_per_su": 4, "su_count": 2},
    "switches": {
        "leaf": {"model": "SN5600-O128", "downlinks": 4},
        "spine": {"model": "SN5600-O128", "sus_per_pod": 1},
        "super_spine": {"model": "SN5600-O128"},
    },
    "addressing": {
        "loopbacks": {"leaf": "10.0.0.0/27", "spine": "10.0.1.0/27", "super_spine": "10.0.2.0/26"},
        "leaf_spine": "10.1.0.0/24",
        "spine_super_spine": "10.2.0.0/20",
        "host_links": {"prefix": "172.16.0.0/24"},
    },
}
BASES = [yaml.safe_load(MINIMAL), THREE_TIER]

HOSTILE_STRINGS = [
    "../../x-{su}-{rail}",
    "/etc/x{su}",
    "{rail[0]}",
    "{rail.__class__}",
    "{rail!r}",
    "{su:>99}",
    "{su:{rail}}",
    "{",
    "}",
    "{}",
    "{0}",
    "{n}",
    "{port}",
    "leaf-{su}-{rail}",
    "rail{rail}",
    "Ethernet{n}",
    "x" * 300,
    "caf\xe9",
    "a b",
    "a\nb",
    "a\x00b",
    "\x1b[31m",
    "",
    " ",
    "-",
    "UPPER",
    "10.0.0.0/8",
    "0.0.0.0/0",
    "::/0",
    "10.0.0.1/24",
    "o2ib0",
    "1.2.3.4@o2ib",
    "/mnt/x",
    "202505",
    "true",
    "~",
    "*x",
    "&x",
    "!!python/object:os.system",
]
HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.sampled_from(HOSTILE_STRINGS),
    st.text(max_size=40),
    st.lists(st.integers(-5, 300), max_size=4),
    st.dictionaries(
        st.sampled_from(["a", "model", "first", "netbox_role", "LINK_TYPE_P1", "osc.max_dirty_mb"]),
        st.integers(-1, 3) | st.integers(-(2**70), 2**70),
        max_size=2,
    ),
)


def _models_in(annotation: Any) -> tuple[str, type[BaseModel]] | None:
    """``("list" | "dict" | "", model)`` when ``annotation`` holds a pydantic model (possibly in a list, a dict's
    values or an Optional), else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "", annotation
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    for arg in args:
        found = _models_in(arg)
        if found is not None:
            kind = "list" if origin in (list, tuple) else "dict" if origin is dict else found[0]
            return kind, found[1]
    return None


def _field_paths(model: type[BaseModel], prefix: tuple[str | int, ...] = ()) -> list[tuple[tuple, Any]]:
    """Every field path of ``model`` (list items as index 0, dict values under key ``X``) with its FieldInfo."""
    out: list[tuple[tuple, Any]] = []
    for name, info in model.model_fields.items():
        path = (*prefix, name)
        out.append((path, info))
        inner = _models_in(info.annotation)
        if inner is not None:
            kind, sub = inner
            out += _field_paths(sub, (*path, *({"list": (0,), "dict": ("X",)}.get(kind, ()))))
    return out


FIELDS = _field_paths(Intent)


def _typed(info: Any, outside: bool = False) -> st.SearchStrategy[Any]:
    """Values of the field's own type at its bounds (ints; just outside them with ``outside``), its choices
    (Literals) or its default."""
    steps = (
        {"ge": (0, 1), "gt": (1, 2), "le": (0, -1), "lt": (-1, -2)}
        if not outside
        else {"ge": (-1,), "gt": (0,), "le": (1,), "lt": (0,)}
    )
    near = [
        getattr(m, a) + d
        for m in info.metadata
        for a, ds in steps.items()
        if isinstance(getattr(m, a, None), int)
        for d in ds
    ]
    choices = [
        a
        for a in typing.get_args(info.annotation)
        for a in (typing.get_args(a) or (a,))
        if isinstance(a, int | str) and not isinstance(a, bool)
    ]
    pool = near + choices + ([info.default] if isinstance(info.default, int | str | bool | float) else [])
    if pool:
        return st.sampled_from(pool)
    return st.integers(0, 64) if typing.get_args(info.annotation) or info.annotation is int else HOSTILE


def _exists(data: Any, path: tuple) -> bool:
    node = data
    for key in path:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return False
    return isinstance(node, dict)


def _set(data: Any, path: tuple, value: Any, delete: bool = False) -> None:
    """Set (or delete) ``path`` in nested dicts/lists, creating what is missing on the way."""
    node = data
    for key, nxt in itertools.pairwise(path):
        if isinstance(node, list):
            if not node:
                node.append({} if not isinstance(nxt, int) else [])
            if not isinstance(node[0], dict | list):
                node[0] = {} if not isinstance(nxt, int) else []
            node = node[0]
            continue
        if not isinstance(node.get(key), dict | list):
            node[key] = [] if isinstance(nxt, int) else {}
        node = node[key]
    last = path[-1]
    if isinstance(node, list):
        node[:] = node[:1] or [None]
        node[0] = value
    elif delete:
        node.pop(last, None)
    else:
        node[last] = value


@st.composite
def mutated_intents(draw: st.DrawFn) -> str:
    data = yaml.safe_load(yaml.safe_dump(draw(st.sampled_from(BASES))))  # a deep copy
    for _ in range(draw(st.integers(1, 4))):
        # mostly fields whose section the intent has (a new section is mostly "required field is missing")
        present = [f for f in FIELDS if _exists(data, f[0][:-1])]
        path, info = draw(st.sampled_from(present) if draw(st.integers(0, 3)) else st.sampled_from(FIELDS))
        op = draw(st.sampled_from(["typed", "typed", "typed", "outside", "hostile", "delete", "unknown"]))
        if op in ("typed", "outside") and _models_in(info.annotation) is not None:
            op = "hostile"  # a whole section: no value "of its type" to draw
        if op == "unknown":
            _set(data, (*path[:-1], draw(st.sampled_from(["extra", "su_count ", "Name"]))), 1)
        else:
            value = draw(HOSTILE if op == "hostile" else _typed(info, outside=op == "outside"))
            _set(data, path, value, delete=op == "delete")
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


@st.composite
def spliced_bytes(draw: st.DrawFn) -> bytes:
    """The minimal intent with a few random byte strings spliced in (or a cut), or random bytes."""
    if draw(st.booleans()):
        return draw(st.binary(max_size=600))
    text = bytearray(MINIMAL.encode())
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text[pos:pos] = draw(
                st.binary(min_size=1, max_size=12)
                | st.sampled_from(
                    [b"{", b"[" * 40, b"&a ", b"*a", b": ", b"\n  - ", b"\t", b"\xff", b"\x00", b"'", b'"', b"!!int "]
                )
            )
        else:
            del text[pos : pos + draw(st.integers(1, 40))]
    return bytes(text)


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _run_cli(content: bytes) -> None:
    """Run validate and plan on ``content`` and check the properties of the module docstring."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "in").mkdir()
        (root / "in" / "fabric.yml").write_bytes(content)
        for argv in (
            ["validate", str(root / "in")],
            ["plan", str(root / "in"), "-o", str(root / "out"), "--no-progress"],
        ):
            err = io.StringIO()
            start = time.perf_counter()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = cli.main(argv)
            elapsed = time.perf_counter() - start
            assert code in (0, 1), (argv[0], code, err.getvalue())
            assert "Traceback" not in err.getvalue()
            assert elapsed < DEADLINE_S, f"{argv[0]} took {elapsed:.1f} s"
            outside = {p for p in _tree(root) if p != "out" and not p.startswith("out/")}
            assert outside == {"in", "in/fabric.yml"}, f"{argv[0]} wrote outside -o: {outside}"
            if code == 1:
                assert not (root / "out").exists(), "a refused intent wrote its output folder"
            if argv[0] == "validate" and code == 1:
                break  # plan loads the same intent and is refused the same way


@FUZZ
@given(mutated_intents())
def test_mutated_intents_are_planned_or_refused_cleanly(text: str):
    _run_cli(text.encode())


@FUZZ
@given(spliced_bytes())
def test_arbitrary_bytes_are_refused_cleanly(content: bytes):
    _run_cli(content)
