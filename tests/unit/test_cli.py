"""The hwaac command: exit codes, output folder handling, --against and the exported schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from hwaac import cli
from hwaac.lab.netplan import read_netplan

REPO = Path(__file__).parents[2]
DEMO = REPO / "inventory" / "demo"
INVALID = REPO / "tests" / "fixtures" / "intents" / "invalid"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_ok(capsys):
    code, out, _ = run(capsys, "validate", str(DEMO))
    assert code == 0
    assert "24 switches" in out and "512 GPUs" in out
    assert "su_capacity is not set" not in out  # the demo sets it
    code, out, _ = run(capsys, "validate", str(REPO / "inventory" / "examples" / "h100-4su"))
    assert code == 0 and "su_capacity is not set" in out


def test_validate_invalid_exits_1_with_location(capsys):
    fixture = INVALID / "pool-too-small.yml"
    code, _, err = run(capsys, "validate", str(fixture))
    assert code == 1
    assert f"{fixture}:" in err and "addressing.host_links.prefix" in err and "a /28 or larger" in err


def test_missing_file_and_bad_usage_exit_2(capsys, tmp_path):
    assert run(capsys, "validate", str(tmp_path / "nope.yml"))[0] == 2
    with pytest.raises(SystemExit) as info:
        cli.main(["plan", str(DEMO)])  # -o is required
    assert info.value.code == 2


def test_schema_is_committed_and_matches_intents(capsys):
    code, out, _ = run(capsys, "schema")
    assert code == 0
    schema = json.loads(out)
    committed = json.loads((REPO / "inventory" / "fabric.schema.json").read_text())
    assert schema == committed, "run `make schema` to refresh inventory/fabric.schema.json"
    validator = jsonschema.Draft202012Validator(schema)
    yaml = YAML(typ="safe")
    for path in [DEMO / "fabric.yml", *(REPO / "inventory" / "examples").glob("*/fabric.yml")]:
        validator.validate(yaml.load(path.read_text()))
    bad = yaml.load((INVALID / "unknown-field.yml").read_text())
    assert not validator.is_valid(bad)


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "demo"
    assert cli.main(["plan", str(DEMO), "-o", str(out), "--no-progress"]) == 0
    return out


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_plan_writes_every_device_and_document(demo_out):
    switches = sorted(p.name for p in (demo_out / "switches").iterdir())
    hosts = sorted(p.name for p in (demo_out / "hosts").iterdir())
    assert len(switches) == 24 and len(hosts) == 64
    for s in switches:
        json.loads((demo_out / "switches" / s / "config_db.json").read_text())
    for h in hosts:
        for rel in ("netplan/60-hwaac-rails.yaml", "sysctl.d/90-hwaac-rdma.conf", "nic-roce.json", "nccl.env"):
            assert (demo_out / "hosts" / h / rel).is_file(), (h, rel)
        # a file that is there is not enough: the netplan must give the node's eight rails their addresses
        rails = read_netplan((demo_out / "hosts" / h / "netplan" / "60-hwaac-rails.yaml").read_text(), source=h)
        assert list(rails) == [f"rail{i}" for i in range(8)] and all(len(r.addresses) == 1 for r in rails.values())
    for doc in ("cabling.csv", "ip-plan.csv", "report.md", "topology.svg"):
        assert (demo_out / "docs" / doc).is_file()
    assert json.loads((demo_out / "plan.json").read_text())["counts"]["gpus"] == 512


def test_second_run_writes_identical_files(capsys, demo_out, tmp_path):
    again = tmp_path / "again"
    shutil.copytree(demo_out, again)
    code, out, _ = run(capsys, "plan", str(DEMO), "-o", str(again), "--no-progress", "--against", str(demo_out))
    assert code == 0
    assert "switches: +0 ~0 -0" in out and "links: +0 ~0 -0" in out and "storage: unchanged" in out
    assert "existing devices whose configuration changes: none" in out
    assert _tree(again) == _tree(demo_out)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "temporary folders left behind"


def test_foreign_output_folder_is_refused_untouched(capsys, tmp_path):
    (tmp_path / "mine.txt").write_text("user data")
    code, _, err = run(capsys, "plan", str(DEMO), "-o", str(tmp_path), "--no-progress")
    assert code == 2 and "no plan.json" in err
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


def _demo_variant(tmp_path: Path, **changes) -> Path:
    yaml = YAML()
    doc = yaml.load((DEMO / "fabric.yml").read_text())
    for dotted, value in changes.items():
        node = doc
        *parents, last = dotted.split("__")
        for key in parents:
            node = node[key]
        node[last] = value
    path = tmp_path / "fabric.yml"
    with path.open("w") as fh:
        yaml.dump(doc, fh)
    return path


def test_growth_by_one_su_only_adds(capsys, demo_out, tmp_path):
    grown = _demo_variant(tmp_path, fabric__su_count=3)
    code, out, _ = run(
        capsys,
        "plan",
        str(grown),
        "-o",
        str(tmp_path / "out"),
        "--no-progress",
        "--against",
        str(demo_out / "plan.json"),
    )
    assert code == 0, out
    # one SU = 32 nodes, 8 leaves, 256 host links + 256 leaf uplinks; nothing changed or removed
    assert "switches: +8 ~0 -0" in out and "nodes: +32 ~0 -0" in out and "links: +512 ~0 -0" in out
    # the 8 spines stay but get the new leaves' uplinks: their configs change and must be pushed
    assert "existing devices whose configuration changes: 8 (spine-p0-01, spine-p0-02," in out


def test_renumbering_is_refused_unless_allowed(capsys, demo_out, tmp_path):
    moved = _demo_variant(tmp_path, addressing__loopbacks__leaf="10.0.2.0/24")
    target = tmp_path / "out"
    shutil.copytree(demo_out, target)
    before = _tree(target)
    code, _, err = run(capsys, "plan", str(moved), "-o", str(target), "--no-progress", "--against", str(target))
    assert code == 3
    assert "refusing to renumber 16" in err and "loopback 10.0.0.1/32 -> 10.0.2.1/32" in err
    assert _tree(target) == before, "nothing may be written when renumbering is refused"
    code, _, _ = run(
        capsys, "plan", str(moved), "-o", str(target), "--no-progress", "--against", str(target), "--allow-renumber"
    )
    assert code == 0
    assert json.loads((target / "plan.json").read_text())["switches"]["leaf-p0-su01-r0"]["loopback"] == "10.0.2.1/32"


def test_failed_render_leaves_previous_output_intact(monkeypatch, demo_out, tmp_path):
    import hwaac.render.sonic as sonic

    target = tmp_path / "out"
    shutil.copytree(demo_out, target)
    before = _tree(target)
    calls = {"n": 0}
    real = sonic.render_config_db

    def failing(plan, switch):
        calls["n"] += 1
        if calls["n"] == 5:
            raise RuntimeError("disk full")
        return real(plan, switch)

    monkeypatch.setattr(sonic, "render_config_db", failing)
    with pytest.raises(RuntimeError):
        cli.main(["plan", str(DEMO), "-o", str(target), "--no-progress"])
    assert _tree(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_shrinking_is_refused_unless_removal_is_allowed(capsys, demo_out, tmp_path):
    shrunk = _demo_variant(tmp_path, fabric__su_count=1)
    code, _, err = run(
        capsys, "plan", str(shrunk), "-o", str(tmp_path / "out"), "--no-progress", "--against", str(demo_out)
    )
    assert code == 3 and not (tmp_path / "out").exists()
    # SU 2 leaves: 8 switches, 32 nodes, 256 host links + 256 leaf uplinks
    assert "refusing to remove 552" in err and "switches leaf-p0-su02-r0" in err
    code, out, _ = run(
        capsys,
        "plan",
        str(shrunk),
        "-o",
        str(tmp_path / "out"),
        "--no-progress",
        "--against",
        str(demo_out),
        "--allow-remove",
    )
    assert code == 0 and "switches: +0 ~0 -8" in out


def test_output_path_that_is_a_file_is_a_usage_error(capsys, tmp_path):
    target = tmp_path / "file.txt"
    target.write_text("x")
    code, _, err = run(capsys, "plan", str(DEMO), "-o", str(target), "--no-progress")
    assert code == 2 and "not a folder" in err and target.read_text() == "x"


def test_folders_of_killed_runs_are_cleaned_up(demo_out, tmp_path):
    target = tmp_path / "out"
    shutil.copytree(demo_out, target)
    stale = tmp_path / ".out.tmp-999999999"  # no such process
    stale.mkdir()
    (stale / "half.json").write_text("{")
    assert cli.main(["plan", str(DEMO), "-o", str(target), "--no-progress"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# --- storage: not an allocation, but it decides host files, so --against reports it -----------------------


def _changed_files(a: Path, b: Path) -> set[str]:
    ta, tb = _tree(a), _tree(b)
    return {k for k in ta.keys() | tb.keys() if ta.get(k) != tb.get(k) and k != "plan.json"}


def test_a_storage_only_change_is_reported_with_the_gpu_nodes_it_touches(capsys, demo_out, tmp_path):
    yaml = YAML()
    doc = yaml.load((DEMO / "fabric.yml").read_text())
    doc["storage"]["lnet"]["networks"][0]["routes"].append("10.30.0.0/16")
    doc["storage"]["filesystems"][0]["tunables"]["osc.max_rpcs_in_flight"] = 16
    path = tmp_path / "fabric.yml"
    with path.open("w") as fh:
        yaml.dump(doc, fh)
    out_dir = tmp_path / "out"
    code, out, _ = run(capsys, "plan", str(path), "-o", str(out_dir), "--no-progress", "--against", str(demo_out))
    assert code == 0, out
    assert "switches: +0 ~0 -0" in out and "nodes: +0 ~0 -0" in out and "links: +0 ~0 -0" in out
    assert "storage: 2 field(s) changed" in out
    assert '  ~ storage lnet.networks[0].routes: ["10.20.0.0/16"] -> ["10.20.0.0/16", "10.30.0.0/16"]' in out
    assert "  ~ storage filesystems[0].tunables.osc.max_rpcs_in_flight: 32 -> 16" in out
    assert "existing devices whose configuration changes: 64 (gpu-su01-h01, gpu-su01-h02," in out
    # what was reported is what changed on disk: the 64 nodes' lustre-client.json and netplan, nothing else
    changed = _changed_files(demo_out, out_dir)
    hosts = sorted(p.name for p in (demo_out / "hosts").iterdir())
    assert changed == {f"hosts/{h}/{f}" for h in hosts for f in ("lustre-client.json", "netplan/60-hwaac-rails.yaml")}


def test_adding_or_removing_storage_is_reported(capsys, demo_out, tmp_path):
    yaml = YAML()
    doc = yaml.load((DEMO / "fabric.yml").read_text())
    del doc["storage"]
    path = tmp_path / "fabric.yml"
    with path.open("w") as fh:
        yaml.dump(doc, fh)
    without = tmp_path / "without"
    code, out, _ = run(capsys, "plan", str(path), "-o", str(without), "--no-progress", "--against", str(demo_out))
    assert code == 0 and "storage: removed" in out and "  - storage (lustre-client.json of every GPU node)" in out
    assert "existing devices whose configuration changes: 64 (" in out
    assert json.loads((without / "plan.json").read_text())["storage"] is None
    code, out, _ = run(
        capsys, "plan", str(DEMO), "-o", str(tmp_path / "with"), "--no-progress", "--against", str(without)
    )
    assert code == 0 and "storage: added" in out and "existing devices whose configuration changes: 64 (" in out


def test_a_plan_json_without_the_storage_entry_counts_as_no_storage(capsys, demo_out, tmp_path):
    # plan.json written before the storage section was recorded; diff_plans as the Terraform provider uses it
    from hwaac.plan.diff import diff_plans

    old = json.loads((demo_out / "plan.json").read_text())
    assert old["storage"]["lnet"]["networks"][0]["routes"] == ["10.20.0.0/16"]
    del old["storage"]
    (tmp_path / "plan.json").write_text(json.dumps(old))
    code, out, _ = run(
        capsys,
        "plan",
        str(DEMO),
        "-o",
        str(tmp_path / "out"),
        "--no-progress",
        "--against",
        str(tmp_path / "plan.json"),
    )
    assert code == 0 and "storage: added" in out
    assert diff_plans(old, old).empty and not diff_plans(old, old).storage


def test_storage_changes_are_field_level():
    from hwaac.plan.diff import storage_changes

    a = {"client_version": "2.15.5", "lnet": {"networks": [{"net": "o2ib0", "rails": [0, 1]}], "discovery": 1}}
    b = {
        "client_version": "2.15.6",
        "lnet": {"networks": [{"net": "o2ib0", "rails": [0, 1], "routes": ["10.20.0.0/16"]}]},
    }
    assert storage_changes(a, a) == {}
    assert storage_changes(a, b) == {
        "client_version": ("2.15.5", "2.15.6"),
        "lnet.networks[0].routes": (None, ["10.20.0.0/16"]),
        "lnet.discovery": (1, None),
    }
    c = {**a, "lnet": {**a["lnet"], "networks": [*a["lnet"]["networks"], {"net": "tcp1"}]}}
    assert storage_changes(a, c) == {"lnet.networks": (a["lnet"]["networks"], c["lnet"]["networks"])}
    assert storage_changes(None, a) == {"": (None, a)} and storage_changes(a, None) == {"": (a, None)}
