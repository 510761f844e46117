"""``lustre-client.json`` (hwaac.render.host.lustre): the demo's file checked field by field against the intent
and the plan (expected values written out by hand from inventory/demo/fabric.yml and the scoping table of the
module docstring), the rail-to-interface mapping on other layouts, and the cases that render no file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from hwaac import cli
from hwaac.inventory import from_plan_file
from hwaac.plan import build_plan
from hwaac.plan.model import Plan
from hwaac.render.host import render_host_files
from hwaac.render.host.lustre import PATH, mount_options, scoped_tunable
from hwaac.validate import load_intent
from tests.unit.test_render_host import demo_dict, node, plan_of  # the demo as data, its plan, a node of it

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "inventory" / "demo"
GOLDEN = REPO / "tests" / "golden" / "demo" / "hosts" / "gpu-su01-h01" / PATH


def rail_ports(plan: Plan, name: str, rail: int) -> list[tuple[int, str]]:
    """(plane, Linux interface) of the node's host links on ``rail``, straight from the plan's links."""
    return sorted(
        (lk.plane, lk.a_port) for lk in plan.links if lk.kind == "host" and lk.a_device == name and lk.rail == rail
    )


def lustre_doc(plan: Plan, name: str) -> dict[str, Any]:
    return json.loads(render_host_files(plan, node(plan, name))[PATH])


@pytest.fixture(scope="module")
def demo() -> Plan:
    return build_plan(load_intent(DEMO))


# --- the demo ---------------------------------------------------------------------------------------------


def test_demo_document_is_the_intent_with_the_plans_interfaces(demo: Plan) -> None:
    doc = lustre_doc(demo, "gpu-su02-h17")
    rails = [iface for r in range(8) for _plane, iface in rail_ports(demo, "gpu-su02-h17", r)]
    assert rails == [f"rail{r}" for r in range(8)]  # host.interface_name "rail{rail}" in the demo
    assert doc == {
        "client_version": "2.15.5",
        "packages": {"flavor": "auto"},
        "lnet": {
            "networks": [
                {
                    "net": "o2ib0",
                    "interfaces": rails,
                    "tunables": {"peer_credits": 32},
                    "lnd_tunables": {"concurrent_sends": 64},
                }
            ],
            "global": {"discovery": 1},
        },
        "filesystems": [
            {
                "name": "lfs1",
                "mgs": [["10.20.0.1@o2ib", "10.20.1.1@o2ib"], ["10.20.0.2@o2ib", "10.20.1.2@o2ib"]],
                "mount_point": "/mnt/lfs1",
                "options": ["flock", "noatime", "_netdev", "x-systemd.requires=lnet.service"],
                "tunables": {
                    "osc.lfs1-OST*.max_rpcs_in_flight": "32",
                    "mdc.lfs1-MDT*.max_rpcs_in_flight": "64",
                    "ldlm.namespaces.lfs1-*.lru_max_age": "600000",
                },
            }
        ],
    }


def test_demo_golden_file_and_layout(demo: Plan) -> None:
    text = render_host_files(demo, node(demo, "gpu-su01-h01"))[PATH]
    assert text == GOLDEN.read_text()
    # stable bytes: keys sorted at every level, 2-space indent, one trailing newline
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"


def test_every_gpu_node_of_the_demo_gets_the_file(demo: Plan) -> None:
    assert len(demo.nodes) == 64
    for n in demo.nodes:
        files = render_host_files(demo, n)
        assert PATH in files, n.name
        assert json.loads(files[PATH])["lnet"]["networks"][0]["interfaces"] == [
            iface for r in range(8) for _p, iface in rail_ports(demo, n.name, r)
        ]


def test_render_is_deterministic(demo: Plan) -> None:
    again = build_plan(load_intent(DEMO))
    for name in ("gpu-su01-h01", "gpu-su02-h32"):
        assert render_host_files(demo, node(demo, name))[PATH] == render_host_files(again, node(again, name))[PATH]


# --- interfaces -------------------------------------------------------------------------------------------


def test_rails_map_to_the_interface_names_the_plan_gives() -> None:
    data = demo_dict()
    data["host"]["interface_name"] = "ens{port}np0"
    data["storage"]["lnet"]["networks"][0]["rails"] = [3, 1]
    plan = plan_of(data)
    doc = lustre_doc(plan, "gpu-su01-h02")
    assert doc["lnet"]["networks"][0]["interfaces"] == ["ens3np0", "ens1np0"]  # listed order = NI order
    assert [iface for _p, iface in rail_ports(plan, "gpu-su01-h02", 3)] == ["ens3np0"]


def test_twin_plane_rail_brings_both_ports_plane_0_first() -> None:
    data = demo_dict()
    data["fabric"]["planes"] = 2
    data["host"]["interface_name"] = "rail{rail}p{plane}"
    data["storage"]["lnet"]["networks"][0]["rails"] = [1, 0]
    plan = plan_of(data)
    doc = lustre_doc(plan, "gpu-su01-h01")
    assert doc["lnet"]["networks"][0]["interfaces"] == ["rail1p0", "rail1p1", "rail0p0", "rail0p1"]
    assert rail_ports(plan, "gpu-su01-h01", 1) == [(0, "rail1p0"), (1, "rail1p1")]


def test_named_interfaces_are_taken_as_written_next_to_rail_networks() -> None:
    data = demo_dict()
    data["storage"]["lnet"]["networks"].append(
        {"net": "tcp1", "interfaces": ["eth2", "eth3"], "lnd_tunables": {"conns_per_peer": 4}}
    )
    data["storage"]["lnet"]["max_interfaces"] = 64
    plan = plan_of(data)
    doc = lustre_doc(plan, "gpu-su01-h01")
    assert [n["net"] for n in doc["lnet"]["networks"]] == ["o2ib0", "tcp1"]
    assert doc["lnet"]["networks"][1] == {
        "net": "tcp1",
        "interfaces": ["eth2", "eth3"],
        "tunables": {},
        "lnd_tunables": {"conns_per_peer": 4},
    }
    assert doc["lnet"]["global"] == {"discovery": 1, "max_interfaces": 64}


# --- file systems -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "pattern"),
    [
        ("osc.max_rpcs_in_flight", "osc.lfs1-OST*.max_rpcs_in_flight"),
        ("mdc.max_mod_rpcs_in_flight", "mdc.lfs1-MDT*.max_mod_rpcs_in_flight"),
        ("llite.max_read_ahead_mb", "llite.lfs1-*.max_read_ahead_mb"),
        ("ldlm.namespaces.lru_size", "ldlm.namespaces.lfs1-*.lru_size"),
        ("ldlm.namespaces.pool.limit", "ldlm.namespaces.lfs1-*.pool.limit"),
    ],
)
def test_tunables_are_scoped_to_the_file_system(key: str, pattern: str) -> None:
    assert scoped_tunable("lfs1", key) == pattern


def test_an_unscopable_tunable_raises() -> None:
    with pytest.raises(ValueError, match=re.escape("'ost.x': not osc., mdc., llite. or ldlm.namespaces.")):
        scoped_tunable("lfs1", "ost.x")


def test_scoped_patterns_do_not_reach_another_file_system() -> None:
    # fs "lfs" must not tune fs "lfs1": device names as a client creates them (docs/render-host.md "Tunable scoping")
    from fnmatch import fnmatchcase

    devices = ["lfs1-OST0000-osc-ffff9c2a4e1b8000", "lfs1-MDT0000-mdc-ffff9c2a4e1b8000", "lfs1-ffff9c2a4e1b8000"]
    for key in ("osc.x", "mdc.x", "llite.x", "ldlm.namespaces.x"):
        kind = key.rsplit(".", 1)[0]
        for fsname, hits in (("lfs", False), ("lfs1", True)):
            pattern = scoped_tunable(fsname, key).removeprefix(kind + ".").removesuffix(".x")
            assert any(fnmatchcase(d, pattern) for d in devices) is hits, (key, fsname)


def test_mount_options_keep_order_drop_repeats_and_add_netdev_and_lnet_ordering_once() -> None:
    lnet = "x-systemd.requires=lnet.service"
    assert mount_options([]) == ["_netdev", lnet]
    assert mount_options(["flock", "noatime", "flock"]) == ["flock", "noatime", "_netdev", lnet]
    assert mount_options(["_netdev", "flock", lnet]) == ["_netdev", "flock", lnet]


def test_two_file_systems_in_intent_order_each_with_its_own_scope() -> None:
    data = demo_dict()
    data["storage"]["filesystems"].append(
        {
            "name": "scratch",
            "mgs": ["mgs-s.lab@o2ib"],
            "mount_point": "/scratch",
            "tunables": {"osc.max_dirty_mb": 512, "llite.checksums": 0},
        }
    )
    doc = lustre_doc(plan_of(data), "gpu-su01-h01")
    assert [f["name"] for f in doc["filesystems"]] == ["lfs1", "scratch"]
    assert doc["filesystems"][1] == {
        "name": "scratch",
        "mgs": [["mgs-s.lab@o2ib"]],
        "mount_point": "/scratch",
        "options": ["_netdev", "x-systemd.requires=lnet.service"],
        "tunables": {"osc.scratch-OST*.max_dirty_mb": "512", "llite.scratch-*.checksums": "0"},
    }
    assert "osc.lfs1-OST*.max_rpcs_in_flight" in doc["filesystems"][0]["tunables"]


def test_packages_flavor_follows_the_intent() -> None:
    data = demo_dict()
    data["storage"]["packages"] = "dkms"
    assert lustre_doc(plan_of(data), "gpu-su01-h01")["packages"] == {"flavor": "dkms"}


# --- no file ----------------------------------------------------------------------------------------------


def test_a_fabric_without_storage_renders_no_lustre_file_and_nothing_else_changes(demo: Plan) -> None:
    # the storage section adds lustre-client.json and, in netplan, the demo's storage route (4 lines per rail
    # table, hwaac.render.host.netplan); every other file and line is the same
    route = re.compile(r"        - to: 10\.20\.0\.0/16\n(          .*\n){3}")
    data = demo_dict()
    del data["storage"]
    plain = plan_of(data)
    for name in ("gpu-su01-h01", "gpu-su02-h09"):
        without = render_host_files(plain, node(plain, name))
        with_storage = render_host_files(demo, node(demo, name))
        assert PATH not in without
        netplan = "netplan/60-hwaac-rails.yaml"
        assert len(route.findall(with_storage[netplan])) == 8 and not route.search(without[netplan])
        assert without[netplan] == route.sub("", with_storage[netplan])
        assert {k: v for k, v in without.items() if k != netplan} == {
            k: v for k, v in with_storage.items() if k not in (PATH, netplan)
        }


def test_appliances_get_no_lustre_file() -> None:
    data = demo_dict()
    data["fabric"]["appliances"] = [{"name": "ufm-01", "su": 1, "slot": 32, "rails": [0, 1]}]
    plan = plan_of(data)
    assert PATH not in render_host_files(plan, node(plan, "ufm-01"))
    assert PATH in render_host_files(plan, node(plan, "gpu-su01-h01"))


# --- where the file lands: hwaac plan's folder and the inventory's hwaac_files --------------------------


def test_hwaac_plan_writes_it_next_to_the_nodes_other_files(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    assert cli.main(["plan", str(DEMO), "-o", str(out), "--no-progress"]) == 0
    inv = from_plan_file(out, render_dir=out)
    files = Path(inv.hostvars["gpu-su01-h03"]["hwaac_files"])
    assert files == out / "hosts" / "gpu-su01-h03"
    assert (files / "nic-roce.json").is_file()
    doc = json.loads((files / PATH).read_text())
    assert doc["filesystems"][0]["mount_point"] == "/mnt/lfs1"
    hosts = sorted(p.name for p in (out / "hosts").iterdir())
    assert len(hosts) == 64 and all((out / "hosts" / h / PATH).is_file() for h in hosts)
