"""hwaac.lab.frr_config against SONiC's own rendering (sonic-render-frr --mode unified, the frrcfgd templates) and
FRR's own syntax check (vtysh -C).

The lab's config must hold the same router bgp / neighbor / route-map / prefix-list / redistribute /
maximum-paths statements as SONiC's for each shape of demo switch and for a config that uses many more fields;
the only difference on purpose is the lab timers (``timers connect 2``, ``advertisement-interval 0`` per neighbour).
SONiC's renders are cached in pytest's cache, keyed by the config's hash and the toolkit version (5 s each).
"""

from __future__ import annotations

import copy
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from hwaac.cli import main as hwaac_main
from hwaac.lab.errors import LabError
from hwaac.lab.frr_config import LAB_NEIGHBOR_LINES, frr_config, neighbors
from hwaac.lab.frr_statements import statements

ROOT = Path(__file__).resolve().parents[2]
BGP_TOP = (
    "ip prefix-list",
    "ipv6 prefix-list",
    "route-map ",
    "router bgp",
    "bgp as-path",
    "bgp community-list",
    "bgp extcommunity-list",
)


def _toolkit_env() -> str:
    found = sorted(glob.glob(os.path.expanduser("~/.cache/hwaac-sonic-toolkit/*/env.sh")))
    env = os.environ.get("HWAAC_SONIC_TOOLKIT")
    if env:
        found = [str(Path(env) / "env.sh")] if (Path(env) / "env.sh").exists() else found
    if not found:
        pytest.fail("SONiC toolkit not set up: set HWAAC_SONIC_TOOLKIT and run its setup.sh (docs/sonic-releases.md)")
    return found[-1]


def sonic_render(request: pytest.FixtureRequest, config_db: dict[str, Any], tmp: Path) -> str:
    """sonic-render-frr --mode unified output for ``config_db`` (from pytest's cache when the same input was
    rendered before by the same toolkit)."""
    env_sh = _toolkit_env()
    blob = json.dumps(config_db, sort_keys=True).encode()
    key = f"hwaac/lab-sonic-frr/{Path(env_sh).parent.name}/{hashlib.sha256(blob).hexdigest()}"
    cache = getattr(request.config, "cache", None)
    if cache is not None and (hit := cache.get(key, None)):
        return hit
    path = tmp / f"{hashlib.sha256(blob).hexdigest()[:12]}.json"
    path.write_text(json.dumps(config_db))
    proc = subprocess.run(
        ["bash", "-c", f'. "{env_sh}" && sonic-render-frr --mode unified "{path}"'],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    if cache is not None:
        cache.set(key, proc.stdout)
    return proc.stdout


def bgp_statements(text: str) -> list[tuple[str, str]]:
    return [(c, s) for c, s in statements(text) if (c == "" and s.startswith(BGP_TOP)) or c.startswith(BGP_TOP)]


def lab_only(config_db: dict[str, Any]) -> list[tuple[str, str]]:
    """The statements the lab adds: its timers for every neighbour (and peer group) of the default VRF."""
    asn = config_db["BGP_GLOBALS"]["default"]["local_asn"]
    names = [k.split("|")[1] for k in config_db.get("BGP_PEER_GROUP", {})]
    names += [k.split("|")[1] for k in config_db.get("BGP_NEIGHBOR", {})]
    return sorted((f"router bgp {asn}", f"neighbor {n} {line}") for n in names for line in LAB_NEIGHBOR_LINES)


def assert_same_as_sonic(mine: str, sonic: str, config_db: dict[str, Any]) -> None:
    ours, theirs = sorted(bgp_statements(mine)), sorted(bgp_statements(sonic))
    extra = sorted(set(ours) - set(theirs))
    missing = sorted(set(theirs) - set(ours))
    assert missing == [], f"SONiC has statements the lab lacks: {missing[:10]}"
    assert extra == lab_only(config_db), f"the lab adds more than its timers: {extra[:10]}"
    assert len(ours) == len(theirs) + len(extra)  # no statement twice


@pytest.fixture(scope="module")
def demo_render(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lab-frr") / "demo"
    assert hwaac_main(["plan", str(ROOT / "inventory" / "demo"), "-o", str(out)]) == 0
    return out


def demo_switches(render: Path) -> dict[str, dict[str, Any]]:
    return {p.parent.name: json.loads(p.read_text()) for p in sorted((render / "switches").glob("*/config_db.json"))}


def shape(config_db: dict[str, Any]) -> tuple[object, ...]:
    """What SONiC's templates iterate over: the device type and the keys of every table, with the addresses, names
    and numbers in them made generic (two switches of one shape run the same template lines)."""
    return (
        config_db["DEVICE_METADATA"]["localhost"].get("type"),
        tuple(sorted((t, tuple(sorted(re.sub(r"\d+", "#", k) for k in rows))) for t, rows in config_db.items())),
    )


def one_per_shape(switches: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    firsts: dict[tuple[object, ...], str] = {}
    for name, db in switches.items():
        firsts.setdefault(shape(db), name)
    return {name: switches[name] for name in sorted(firsts.values())}


@pytest.mark.cost(20)
def test_every_demo_switch_shape_matches_sonic_render(
    demo_render: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """One switch of each shape (a render is 3 s of sonic-cfggen; the demo's 24 switches have a few shapes)."""
    everyone = demo_switches(demo_render)
    assert len(everyone) == 24
    switches = one_per_shape(everyone)
    roles = {everyone[n]["DEVICE_METADATA"]["localhost"].get("type") for n in everyone}
    assert roles == {db["DEVICE_METADATA"]["localhost"].get("type") for db in switches.values()}
    assert 2 <= len(switches) < len(everyone)
    with ThreadPoolExecutor(max_workers=3) as pool:  # each render is one sonic-cfggen process pair
        sonic = dict(
            zip(switches, pool.map(lambda db: sonic_render(request, db, tmp_path), switches.values()), strict=True)
        )
    for name, db in switches.items():
        mine = frr_config(db)
        assert_same_as_sonic(mine, sonic[name], db)
        # what the comparison covers is really there: sessions, policy, what is announced, ECMP width
        kinds = {s.split()[0] for _, s in bgp_statements(mine)}
        assert {"router", "neighbor", "route-map", "maximum-paths"} <= kinds, name
        assert kinds & {"network", "redistribute"}, name


def test_lab_timers_off_is_sonic_exactly(demo_render: Path, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    db = demo_switches(demo_render)["spine-p0-01"]
    mine = sorted(bgp_statements(frr_config(db, lab_timers=False)))
    assert mine == sorted(bgp_statements(sonic_render(request, db, tmp_path)))


def _rich_config() -> dict[str, Any]:
    """A leaf config that uses many of the fields the templates translate."""
    return {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": "rich-leaf",
                "bgp_asn": "65100",
                "type": "LeafRouter",
                "docker_routing_config_mode": "unified",
                "frr_mgmt_framework_config": "true",
            }
        },
        "BGP_GLOBALS": {
            "default": {
                "local_asn": "65100",
                "router_id": "10.0.0.9",
                "load_balance_mp_relax": "true",
                "as_path_mp_as_set": "true",
                "log_nbr_state_changes": "true",
                "always_compare_med": "true",
                "deterministic_med": "true",
                "default_local_preference": "150",
                "graceful_restart_enable": "true",
                "gr_restart_time": "240",
                "max_delay": "60",
                "establish_wait": "30",
                "fast_external_failover": "false",
                "external_compare_router_id": "true",
            }
        },
        "BGP_GLOBALS_AF": {
            "default|ipv4_unicast": {"max_ebgp_paths": "32", "max_ibgp_paths": "8"},
            "default|ipv6_unicast": {"max_ebgp_paths": "16"},
        },
        "BGP_GLOBALS_AF_NETWORK": {"default|ipv4_unicast|10.9.0.0/24": {"policy": "RM_SET"}},
        "BGP_GLOBALS_AF_AGGREGATE_ADDR": {"default|ipv4_unicast|10.8.0.0/16": {"summary_only": "true"}},
        "BGP_PEER_GROUP": {"default|SPINES": {"asn": "65000", "keepalive": "3", "holdtime": "9", "bfd": "true"}},
        "BGP_PEER_GROUP_AF": {
            "default|SPINES|ipv4_unicast": {
                "admin_status": "up",
                "route_map_in": ["RM_IN"],
                "soft_reconfiguration_in": "true",
            }
        },
        "BGP_NEIGHBOR": {
            "default|10.1.0.0": {
                "peer_group_name": "SPINES",
                "name": "spine-1",
                "local_addr": "10.1.0.1",
                "admin_status": "up",
            },
            "default|10.1.0.2": {
                "asn": "65001",
                "name": "spine-2",
                "admin_status": "down",
                "shutdown_message": "maintenance",
                "ebgp_multihop": "true",
            },
            "default|Ethernet8": {"peer_type": "external", "name": "unnumbered", "capability_ext_nexthop": "true"},
            "default|fc00::1": {"asn": "65002", "keepalive": "3", "holdtime": "10", "passive_mode": "true"},
        },
        "BGP_NEIGHBOR_AF": {
            "default|10.1.0.0|ipv4_unicast": {
                "admin_status": "true",
                "allow_as_in": "true",
                "allow_as_count": "2",
                "max_prefix_limit": "1000",
                "max_prefix_warning_threshold": "80",
                "max_prefix_warning_only": "true",
            },
            "default|10.1.0.2|ipv4_unicast": {
                "admin_status": "false",
                "send_community": "standard",
                "nhself": "true",
                "route_map_out": ["RM_SET"],
            },
            "default|Ethernet8|ipv4_unicast": {"admin_status": "up", "prefix_list_in": "PL_V4"},
            "default|fc00::1|ipv6_unicast": {"admin_status": "up", "route_map_in": ["RM_IN"]},
        },
        "PREFIX_SET": {"PL_V4": {"mode": "IPv4"}, "PL_V6": {"mode": "IPv6"}},
        "PREFIX": {
            "PL_V4|10|10.0.0.0/8|24..32": {"action": "permit"},
            "PL_V4|20|0.0.0.0/0|exact": {"action": "deny"},
            "PL_V6|fc00::/7|64..128": {"action": "permit"},
        },
        "ROUTE_MAP_SET": {"RM_IN": {}, "RM_SET": {}},
        "ROUTE_MAP": {
            "RM_IN|10": {
                "route_operation": "permit",
                "match_prefix_set": "PL_V4",
                "set_local_preference": "200",
                "set_med": "50",
            },
            "RM_IN|20": {"route_operation": "deny", "match_as_path": "AS_BAD"},
            # no set_asn/set_repeat_asn: the template compares the string from CONFIG_DB with 0 and
            # fails (route_map.j2 l.64, TypeError), so SONiC renders nothing to compare with
            "RM_SET|10": {
                "route_operation": "permit",
                "set_community_inline": ["65100:1", "no-export"],
                "set_origin": "IGP",
            },
        },
        "AS_PATH_SET": {"AS_BAD": {"as_path_set_member": ["_65666_"]}},
        "COMMUNITY_SET": {
            "CS1": {"set_type": "STANDARD", "match_action": "ANY", "community_member": ["65100:1", "65100:2"]}
        },
        "ROUTE_REDISTRIBUTE": {"default|connected|bgp|ipv4": {"route_map": ["RM_SET"]}, "default|static|bgp|ipv6": {}},
    }


def test_rich_config_matches_sonic_render(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    db = _rich_config()
    mine = frr_config(db)
    assert_same_as_sonic(mine, sonic_render(request, db, tmp_path), db)
    st = set(statements(mine))
    # spot checks that the rich fields were translated at all (the comparison above would also pass if neither
    # side had them)
    for want in [
        ("router bgp 65100", "neighbor 10.1.0.2 shutdown message maintenance"),
        ("router bgp 65100", "neighbor Ethernet8 interface remote-as external"),
        ("router bgp 65100 > address-family ipv4 unicast", "neighbor 10.1.0.0 allowas-in 2"),
        ("router bgp 65100 > address-family ipv4 unicast", "no neighbor 10.1.0.2 activate"),
        ("router bgp 65100 > address-family ipv6 unicast", "maximum-paths 16"),
        ("", "ip prefix-list PL_V4 seq 20 deny 0.0.0.0/0"),
        # the template compares prefix lengths as strings: '24' > '8' is false, so no "ge 24"
        ("", "ip prefix-list PL_V4 seq 10 permit 10.0.0.0/8 le 32"),
        ("", "ipv6 prefix-list PL_V6 permit fc00::/7 le 128"),
        ("route-map RM_SET permit 10", "set community 65100:1 no-export"),
    ]:
        assert want in st, want


@pytest.mark.parametrize(
    ("value", "shutdown", "activate"),
    [
        ("true", False, True),
        ("up", False, True),  # frrcfgd 202505 reads both (hdl_admin_status)
        ("false", True, False),
        ("down", True, False),
    ],
)
def test_admin_status_values(value: str, shutdown: bool, activate: bool) -> None:
    db = {
        "BGP_GLOBALS": {"default": {"local_asn": "65001"}},
        "BGP_NEIGHBOR": {"default|10.0.0.1": {"asn": "65002", "admin_status": value}},
        "BGP_NEIGHBOR_AF": {"default|10.0.0.1|ipv4_unicast": {"admin_status": value}},
    }
    st = set(statements(frr_config(db)))
    assert (("router bgp 65001", "neighbor 10.0.0.1 shutdown") in st) is shutdown
    fam = "router bgp 65001 > address-family ipv4 unicast"
    assert ((fam, "neighbor 10.0.0.1 activate") in st) is activate
    assert ((fam, "no neighbor 10.0.0.1 activate") in st) is not activate
    assert neighbors(db)["10.0.0.1"]["enabled"] is activate


@pytest.mark.parametrize(
    ("table", "key", "fields", "message"),
    [
        (
            "BGP_NEIGHBOR",
            "default|10.0.0.1",
            {"asn": "1", "admin_status": "enable"},
            "BGP_NEIGHBOR|default|10.0.0.1 admin_status: 'enable' is not valid: up, down (or true, false)",
        ),
        (
            "BGP_NEIGHBOR_AF",
            "default|10.0.0.1|ipv4_unicast",
            {"admin_status": "yes"},
            "BGP_NEIGHBOR_AF|default|10.0.0.1|ipv4_unicast admin_status: 'yes' is not valid",
        ),
        (
            "BGP_NEIGHBOR_AF",
            "default|10.0.0.1|l2vpn_evpn",
            {"admin_status": "up"},
            "the l2vpn_evpn family is not modelled by the lab",
        ),
        ("PREFIX", "PL|10.0.0.0/8|8to24", {"action": "permit"}, "range '8to24' is not valid"),
        (
            "ROUTE_MAP",
            "RM|10",
            {"route_operation": "permit", "set_asn": "65001", "set_repeat_asn": "2"},
            "SONiC's frrcfgd template fails on it",
        ),
    ],
)
def test_refused_values(table: str, key: str, fields: dict[str, str], message: str) -> None:
    db: dict[str, Any] = {
        "BGP_GLOBALS": {"default": {"local_asn": "65001"}},
        "BGP_NEIGHBOR": {"default|10.0.0.1": {"asn": "65002"}},
        "PREFIX_SET": {"PL": {"mode": "IPv4"}},
    }
    db.setdefault(table, {})[key] = fields
    with pytest.raises(LabError, match=message.replace("|", r"\|").replace("(", r"\(").replace(")", r"\)")):
        frr_config(db)


def test_lab_timers_replace_config_retry_and_interval() -> None:
    db = {
        "BGP_GLOBALS": {"default": {"local_asn": "65001"}},
        "BGP_NEIGHBOR": {"default|10.0.0.1": {"asn": "65002", "conn_retry": "30", "min_adv_interval": "5"}},
    }
    lab = {s for _, s in statements(frr_config(db))}
    plain = {s for _, s in statements(frr_config(db, lab_timers=False))}
    assert {"neighbor 10.0.0.1 timers connect 2", "neighbor 10.0.0.1 advertisement-interval 0"} <= lab
    assert not {"neighbor 10.0.0.1 timers connect 30", "neighbor 10.0.0.1 advertisement-interval 5"} & lab
    assert {"neighbor 10.0.0.1 timers connect 30", "neighbor 10.0.0.1 advertisement-interval 5"} <= plain


def test_timers_floor_for_big_labs() -> None:
    db = {
        "BGP_GLOBALS": {"default": {"local_asn": "65001"}},
        "BGP_NEIGHBOR": {
            "default|10.0.0.1": {"asn": "65002", "keepalive": "3", "holdtime": "10"},
            "default|10.0.0.3": {"asn": "65002", "keepalive": "20", "holdtime": "60"},
        },
    }
    lines = {s for _, s in statements(frr_config(db, timers_floor=(10, 30)))}
    assert {"neighbor 10.0.0.1 timers 10 30", "neighbor 10.0.0.3 timers 20 60"} <= lines  # a floor, not a value
    assert "neighbor 10.0.0.1 timers 3 10" in {s for _, s in statements(frr_config(db))}
    # without lab timers the config's timers always stand
    assert "neighbor 10.0.0.1 timers 3 10" in {
        s for _, s in statements(frr_config(db, lab_timers=False, timers_floor=(10, 30)))
    }


def test_vtysh_accepts_every_rendered_config(demo_render: Path, tmp_path: Path) -> None:
    vtysh = shutil.which("vtysh") or "/usr/bin/vtysh"
    if not Path(vtysh).exists():
        pytest.fail("vtysh not found: install frr (scripts/install-system-deps.sh)")
    configs = {n: frr_config(db) for n, db in demo_switches(demo_render).items()}
    configs["rich"] = frr_config(_rich_config())
    for name, text in configs.items():
        path = tmp_path / f"{name}.conf"
        path.write_text(text)
        proc = subprocess.run([vtysh, "-C", "-f", str(path)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{name}: {proc.stdout}{proc.stderr}"
    # and the check does refuse a broken file
    bad = tmp_path / "bad.conf"
    bad.write_text(configs["rich"].replace("maximum-paths 32", "maximum-paths 514"))
    assert subprocess.run([vtysh, "-C", "-f", str(bad)], capture_output=True, timeout=60).returncode != 0


def test_input_not_modified_and_output_deterministic(demo_render: Path) -> None:
    db = demo_switches(demo_render)["leaf-p0-su01-r0"]
    before = copy.deepcopy(db)
    assert frr_config(db) == frr_config(db)
    assert db == before
