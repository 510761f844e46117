"""The plan look-up filters (plugins/filter/plan_lookup.py over hwaac.plan.lookup) on the demo fabric as
``hwaac plan -o DIR`` writes it: a port's peer, a node's rails, a GPU node's NCCL_IB_HCA; and their errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.aiinfra.hwaac.plugins.filter.plan_lookup import FilterModule
from hwaac.plan import build_plan
from hwaac.plan.lookup import PlanLookupError, parse_ib_hca
from hwaac.render import render_to_dir
from hwaac.telemetry.host_ports import rendered_ports
from hwaac.validate import load_intent

ROOT = Path(__file__).resolve().parents[3]
FILTERS = FilterModule().filters()
NODE = "gpu-su01-h01"


@pytest.fixture(scope="module")
def plan_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("plan")
    render_to_dir(build_plan(load_intent(ROOT / "inventory" / "demo")), out)
    return out


@pytest.fixture(params=["folder", "plan.json", "loaded"])
def plan(request: pytest.FixtureRequest, plan_dir: Path) -> Any:
    """The three ways a playbook names the plan."""
    if request.param == "folder":
        return str(plan_dir)
    if request.param == "plan.json":
        return str(plan_dir / "plan.json")
    return json.loads((plan_dir / "plan.json").read_text())


PEERS = [
    (
        ("leaf-p0-su01-r0", "Ethernet0"),
        {
            "device": NODE,
            "port": "rail0",
            "address": "172.16.0.1",
            "local_address": "172.16.0.0",
            "cable_id": "H0000000",
            "kind": "host",
            "plane": 0,
            "prefixlen": 31,
            "rail": 0,
        },
    ),
    (
        (NODE, "rail3"),
        {
            "device": "leaf-p0-su01-r3",
            "port": "Ethernet0",
            "address": "172.16.0.192",
            "local_address": "172.16.0.193",
            "cable_id": "H0000096",
            "kind": "host",
            "plane": 0,
            "prefixlen": 31,
            "rail": 3,
        },
    ),
    (
        ("leaf-p0-su01-r0", "Ethernet128"),
        {
            "device": "spine-p0-01",
            "port": "Ethernet0",
            "address": "10.1.0.0",
            "local_address": "10.1.0.1",
            "cable_id": "L0000000",
            "kind": "leaf_spine",
            "plane": 0,
            "prefixlen": 31,
        },
    ),
    (
        ("spine-p0-01", "Ethernet0"),
        {
            "device": "leaf-p0-su01-r0",
            "port": "Ethernet128",
            "address": "10.1.0.1",
            "local_address": "10.1.0.0",
            "cable_id": "L0000000",
            "kind": "leaf_spine",
            "plane": 0,
            "prefixlen": 31,
        },
    ),
]


@pytest.mark.parametrize(("where", "expected"), PEERS, ids=[f"{d}-{p}" for (d, p), _ in PEERS])
def test_plan_peer(plan: Any, where: tuple[str, str], expected: dict[str, Any]) -> None:
    assert FILTERS["plan_peer"](plan, *where) == expected


def test_plan_rails_in_nic_order_and_consistent_with_the_cables(plan: Any) -> None:
    rails = FILTERS["plan_rails"](plan, NODE)
    assert [r["interface"] for r in rails] == [f"rail{i}" for i in range(8)]
    assert [r["rail"] for r in rails] == list(range(8))
    assert rails[2] == {
        "rail": 2,
        "plane": 0,
        "interface": "rail2",
        "address": "172.16.0.129",
        "prefixlen": 31,
        "network": "172.16.0.128/31",
        "leaf": "leaf-p0-su01-r2",
        "leaf_port": "Ethernet0",
        "leaf_address": "172.16.0.128",
        "cable_id": "H0000064",
    }
    for r in rails:  # each rail port's leaf end is the peer the cabling gives
        peer = FILTERS["plan_peer"](plan, r["leaf"], r["leaf_port"])
        assert (peer["device"], peer["port"], peer["address"]) == (NODE, r["interface"], r["address"])


@pytest.mark.parametrize("rail", [3, "3"], ids=["int", "text-from-an-inventory-var"])
def test_plan_rails_of_one_rail(plan_dir: Path, rail: Any) -> None:
    (one,) = FILTERS["plan_rails"](str(plan_dir), NODE, rail)
    assert (one["interface"], one["leaf"], one["leaf_port"]) == ("rail3", "leaf-p0-su01-r3", "Ethernet0")


def test_plan_nccl_hca_is_what_nccl_env_holds(plan_dir: Path) -> None:
    hca = FILTERS["plan_nccl_hca"](str(plan_dir), NODE)
    env = (plan_dir / "hosts" / NODE / "nccl.env").read_text()
    assert f"NCCL_IB_HCA={hca['value']}\n" in env
    assert hca["exact"] is True and hca["exclude"] is False
    # the same devices, in the same order, as the node's rendered NIC ports
    assert hca["devices"] == [p["hca"] for p in rendered_ports(plan_dir, NODE)]
    assert {e["port"] for e in hca["entries"]} == {1}
    assert FILTERS["plan_nccl_hca"](str(plan_dir / "plan.json"), NODE) == hca


IB_HCA = [
    (
        "=mlx5_0:1,mlx5_1:1",
        {
            "exclude": False,
            "exact": True,
            "devices": ["mlx5_0", "mlx5_1"],
            "entries": [{"device": "mlx5_0", "port": 1}, {"device": "mlx5_1", "port": 1}],
        },
    ),
    ("mlx5", {"exclude": False, "exact": False, "devices": ["mlx5"], "entries": [{"device": "mlx5", "port": None}]}),
    (
        "^=mlx5_8,mlx5_9",
        {
            "exclude": True,
            "exact": True,
            "devices": ["mlx5_8", "mlx5_9"],
            "entries": [{"device": "mlx5_8", "port": None}, {"device": "mlx5_9", "port": None}],
        },
    ),
    (
        "^mlx5_1",
        {"exclude": True, "exact": False, "devices": ["mlx5_1"], "entries": [{"device": "mlx5_1", "port": None}]},
    ),
    # NCCL 2.30's rail and plane fields; an empty port field names every port
    (
        "=mlx5_0:1:0:0,mlx5_1::0:1",
        {
            "exclude": False,
            "exact": True,
            "devices": ["mlx5_0", "mlx5_1"],
            "entries": [{"device": "mlx5_0", "port": 1}, {"device": "mlx5_1", "port": None}],
        },
    ),
    # NCCL trims nothing: the second name starts with a space (and names no device)
    (
        "=mlx5_0, mlx5_1",
        {
            "exclude": False,
            "exact": True,
            "devices": ["mlx5_0", " mlx5_1"],
            "entries": [{"device": "mlx5_0", "port": None}, {"device": " mlx5_1", "port": None}],
        },
    ),
]


@pytest.mark.parametrize(("value", "expected"), IB_HCA, ids=[v for v, _ in IB_HCA])
def test_parse_ib_hca(value: str, expected: dict[str, Any]) -> None:
    assert parse_ib_hca(value) == {"value": value, **expected}


@pytest.mark.parametrize("entry", ["mlx5_0:x", "mlx5_0:1:0:x", "mlx5_0:1:0:0:0", ":1"])
def test_parse_ib_hca_bad_entry(entry: str) -> None:
    with pytest.raises(PlanLookupError, match=rf"entry '{entry}' is not DEVICE\[:PORT\[:RAIL\[:PLANE\]\]\]"):
        parse_ib_hca(f"=mlx5_1,{entry}")


BAD = [
    (
        "plan_peer",
        ("leaf-p0-su99-r0", "Ethernet0"),
        r"device 'leaf-p0-su99-r0' is not in the plan of fabric 'demo' \(24 switches, 64 nodes; names like ",
    ),
    (
        "plan_peer",
        ("leaf-p0-su01-r0", "Ethernet999"),
        r"leaf-p0-su01-r0 port 'Ethernet999' has no planned cable \(cabled ports: Ethernet0, Ethernet4, .* in all\)",
    ),
    ("plan_peer", (NODE, ""), r"port must be a non-empty name, got ''"),
    ("plan_rails", ("leaf-p0-su01-r0",), r"'leaf-p0-su01-r0' is a switch, not a node"),
    ("plan_rails", (NODE, 9), r"gpu-su01-h01 has no port on rail 9 \(its rails: \[0, 1, 2, 3, 4, 5, 6, 7\]\)"),
    ("plan_rails", (NODE, "three"), r"rail must be a rail number, got 'three'"),
    ("plan_nccl_hca", ("spine-p0-01",), r"'spine-p0-01' is a switch, not a GPU node"),
]


@pytest.mark.parametrize(("name", "args", "message"), BAD, ids=[f"{n}-{a[-1]}" for n, a, _ in BAD])
def test_lookup_errors_name_what_is_valid(plan_dir: Path, name: str, args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(AnsibleFilterError, match=f"aiinfra.hwaac.{name}: {message}"):
        FILTERS[name](str(plan_dir), *args)


def test_plan_inputs_that_are_not_a_plan(tmp_path: Path, plan_dir: Path) -> None:
    with pytest.raises(AnsibleFilterError, match=r"no-such: No such file or directory \(write the plan"):
        FILTERS["plan_peer"](str(tmp_path / "no-such"), "a", "b")
    with pytest.raises(AnsibleFilterError, match=r"not an hwaac plan: expected format 'hwaac-plan/1', got None"):
        FILTERS["plan_peer"]({"switches": {}}, "a", "b")
    loaded = json.loads((plan_dir / "plan.json").read_text())
    with pytest.raises(
        AnsibleFilterError,
        match=r"the NCCL HCA list is in the rendered hosts/<node>/nccl.env: give "
        r"the folder",
    ):
        FILTERS["plan_nccl_hca"](loaded, NODE)


def test_nccl_env_missing_or_without_the_variable(tmp_path: Path, plan_dir: Path) -> None:
    copy = tmp_path / "plan"
    copy.mkdir()
    shutil.copy(plan_dir / "plan.json", copy / "plan.json")
    with pytest.raises(
        AnsibleFilterError,
        match=r"hosts/gpu-su01-h01/nccl.env: no such file \(`hwaac plan FABRIC -o "
        r"DIR` renders",
    ):
        FILTERS["plan_nccl_hca"](str(copy), NODE)
    (copy / "hosts" / NODE).mkdir(parents=True)
    (copy / "hosts" / NODE / "nccl.env").write_text("# hand-edited\nNCCL_IB_GID_INDEX=3\n")
    with pytest.raises(AnsibleFilterError, match=r"sets no NCCL_IB_HCA \(it sets NCCL_IB_GID_INDEX\)"):
        FILTERS["plan_nccl_hca"](str(copy), NODE)
    (copy / "hosts" / NODE / "nccl.env").write_text("NCCL_IB_HCA\n")
    with pytest.raises(AnsibleFilterError, match=r"nccl.env:1: not a KEY=value line: 'NCCL_IB_HCA'"):
        FILTERS["plan_nccl_hca"](str(copy), NODE)


def test_a_changed_plan_file_is_read_again(tmp_path: Path, plan_dir: Path) -> None:
    """The file is cached by path, size and mtime: a re-planned fabric is not answered from the old one."""
    path = tmp_path / "plan.json"
    doc = json.loads((plan_dir / "plan.json").read_text())
    path.write_text(json.dumps(doc))
    assert FILTERS["plan_peer"](str(path), "leaf-p0-su01-r0", "Ethernet0")["address"] == "172.16.0.1"
    doc["links"]["H0000000"]["a"][2] = "172.16.9.9"
    path.write_text(json.dumps(doc, indent=1))
    assert FILTERS["plan_peer"](str(path), "leaf-p0-su01-r0", "Ethernet0")["address"] == "172.16.9.9"
