"""Real checks of the rendered host networking, no mocks (the rails in network namespaces:
test_host_network_namespaces.py).

a. netplan's own generator (``netplan generate --root-dir``) accepts the rendered netplan file and turns it into
   systemd-networkd units with the rail tables and source rules.
b. The rendered sysctl file applies in a namespace before any rail interface exists (as systemd-sysctl does at
   boot), and its ARP/rp_filter values then hold on rails created afterwards.

These tests need root and the tools that ``scripts/install-system-deps.sh`` installs (netplan.io, iproute2).
They FAIL, not skip, when something is missing, so CI cannot pass without running them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from host_net_tools import APPLY_SYSCTL, DEMO, NETPLAN, SYSCTL, host_links, node, run, sysctl_lines, tool
from ruamel.yaml import YAML

from hwaac.model.intent import Intent
from hwaac.plan import build_plan
from hwaac.plan.model import Plan, ip_str
from hwaac.render.host import render_host_files
from hwaac.validate import load_intent

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def demo() -> Plan:
    return build_plan(load_intent(DEMO))


def variant(**changes: Any) -> Plan:
    data = YAML(typ="safe", pure=True).load((DEMO / "fabric.yml").read_text())
    for dotted, value in changes.items():
        *path, last = dotted.split("__")
        d = data
        for k in path:
            d = d[k]
        d[last] = value
    return build_plan(Intent.model_validate(data))


# --- a. netplan generate ----------------------------------------------------------------------------------


def network_units(text: str) -> list[tuple[str, dict[str, str]]]:
    """Sections of a systemd .network file as (name, {key: value}), in file order (sections repeat)."""
    out: list[tuple[str, dict[str, str]]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            out.append((line.strip("[]"), {}))
        else:
            k, _, v = line.partition("=")
            out[-1][1][k.strip()] = v.strip()
    return out


CASES = {
    "demo-su01-h01": lambda d: (d, "gpu-su01-h01"),
    "demo-su02-h05": lambda d: (d, "gpu-su02-h05"),
    "demo-last": lambda d: (d, d.nodes[-1].name),
    "even-parity": lambda d: (variant(addressing__host_links__host_address="even"), "gpu-su01-h02"),
    "rail-subnet": lambda d: (variant(addressing__host_links__mode="rail_subnet"), "gpu-su02-h07"),
    "twin-plane": lambda d: (variant(fabric__planes=2, host__interface_name="rail{rail}p{plane}"), "gpu-su01-h01"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_netplan_generate_accepts_rendered_file(case: str, demo: Plan, tmp_path: Path) -> None:
    netplan = tool("netplan")
    plan, name = CASES[case](demo)
    files = render_host_files(plan, node(plan, name))
    conf = tmp_path / "etc" / "netplan" / "60-hwaac-rails.yaml"
    conf.parent.mkdir(parents=True)
    conf.write_text(files[NETPLAN])
    conf.chmod(0o600)
    proc = run(netplan, "generate", "--root-dir", str(tmp_path), check=False)
    assert proc.returncode == 0, f"netplan generate failed:\n{proc.stdout}\n{proc.stderr}"
    assert "Error" not in proc.stderr and "error" not in proc.stderr.lower(), proc.stderr

    unit_dir = tmp_path / "run" / "systemd" / "network"
    links = host_links(plan, name)
    units = sorted(p.name for p in unit_dir.glob("*.network"))
    assert units == sorted(f"10-netplan-{lk.a_port}.network" for lk in links)
    mtu = str(plan.intent.qos.host_mtu)
    for ordinal, lk in enumerate(links):
        table = str(plan.intent.host.routing.table_base + ordinal)
        priority = str(
            plan.intent.host.routing.rule_priority_base + ordinal * plan.intent.host.routing.rule_priority_step
        )
        a, b = ip_str(lk.a_ip), ip_str(lk.b_ip)
        sections = network_units((unit_dir / f"10-netplan-{lk.a_port}.network").read_text())
        by_name: dict[str, list[dict[str, str]]] = {}
        for sec, kv in sections:
            by_name.setdefault(sec, []).append(kv)
        assert by_name["Match"] == [{"Name": lk.a_port}]
        assert by_name["Link"][0]["MTUBytes"] == mtu
        assert by_name["Network"][0]["Address"] == f"{a}/{lk.prefixlen}"
        assert by_name["Network"][0]["LinkLocalAddressing"] == "no"
        assert "DHCP" not in by_name["Network"][0] or by_name["Network"][0]["DHCP"] == "no"
        routes = by_name["Route"]
        assert all(r["Table"] == table for r in routes), routes
        agg_net, agg_len = plan.host_aggregate(lk.plane)  # each plane routes only its own host-link block
        agg = f"{ip_str(agg_net)}/{agg_len}"
        assert {"Destination": agg, "Gateway": b, "PreferredSource": a, "Table": table} in routes
        assert {
            "Destination": f"{ip_str(lk.network)}/{lk.prefixlen}",
            "PreferredSource": a,
            "Scope": "link",
            "Table": table,
        } in routes
        assert by_name["RoutingPolicyRule"] == [{"From": a, "Table": table, "Priority": priority}]


# --- b. sysctl at boot ------------------------------------------------------------------------------------

READ_CONF = textwrap.dedent("""
    import json, sys
    out = {}
    for scope, leaf in json.loads(sys.argv[1]):
        with open(f"/proc/sys/net/ipv4/conf/{scope}/{leaf}") as f:
            out[f"{scope}/{leaf}"] = int(f.read())
    print(json.dumps(out))
""")


def test_sysctl_applies_before_rails_exist_and_holds_on_them(demo: Plan) -> None:
    if os.geteuid() != 0:
        pytest.fail("network-namespace tests need root (CAP_NET_ADMIN, CAP_SYS_ADMIN)")
    ip = tool("ip")
    name = "gpu-su01-h01"
    text = render_host_files(demo, node(demo, name))[SYSCTL]
    lines = sysctl_lines(text)
    expected = {"arp_ignore": 1, "arp_announce": 2, "rp_filter": 2}
    assert {k: int(v) for k, v in lines if k.startswith("net.ipv4.conf.")} == {
        f"net.ipv4.conf.all.{leaf}": v for leaf, v in expected.items()
    }
    ns = f"hw{os.getpid()}-boot"
    run(ip, "netns", "del", ns, check=False)
    run(ip, "netns", "add", ns)
    try:
        # Boot order: no rail interface exists yet; every key of the file must apply (a missing
        # net.ipv4.conf.<rail>.* key would raise here, as it makes systemd-sysctl fail at boot).
        exec_ns = [ip, "netns", "exec", ns, sys.executable, "-c"]
        assert int(run(*exec_ns, APPLY_SYSCTL, json.dumps(lines)).stdout) == len(expected)
        # The NICs probe later; give them the laxest per-interface values a distribution might leave behind.
        rails = [lk.a_port for lk in host_links(demo, name)]
        batch = [f"link add {r} type veth peer name p{r}" for r in rails] + [f"link set dev {r} up" for r in rails]
        run(ip, "-n", ns, "-batch", "-", stdin="\n".join(batch) + "\n")
        zeros = [(f"net/ipv4/conf/{r}/{leaf}", "0") for r in rails for leaf in expected]
        run(*exec_ns, APPLY_SYSCTL, json.dumps(zeros))
        got = json.loads(
            run(*exec_ns, READ_CONF, json.dumps([(sc, leaf) for sc in ["all", *rails] for leaf in expected])).stdout
        )
        # conf/all keeps the intended values after the rails appear with their own 0s; for these three keys the
        # kernel uses max(conf/all, conf/<iface>) (Documentation/networking/ip-sysctl.rst), which is why the file
        # needs no per-rail keys. (This checks what the file leaves in the kernel, not the kernel's max rule.)
        for leaf, value in expected.items():
            assert got[f"all/{leaf}"] == value, (leaf, got)
        for r in rails:
            for leaf in expected:
                assert got[f"{r}/{leaf}"] == 0
    finally:
        subprocess.run([ip, "netns", "del", ns], capture_output=True, timeout=30)
