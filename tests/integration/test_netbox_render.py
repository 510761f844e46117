"""Rendering from what NetBox holds (``hwaac netbox render``, :func:`hwaac.netbox.source.plan_from_netbox`): when
NetBox matches the plan the files equal the intent's, the GPU nodes' ``lustre-client.json`` and netplan storage
routes included; a value corrected in NetBox is what the configs carry; a missing cable stops rendering and names
it."""

from __future__ import annotations

import filecmp
import json
import os
import subprocess
import sys
from pathlib import Path

import pynetbox
import pytest

from hwaac.devnetbox.instances import Instance
from hwaac.netbox.source import NetBoxRecordError, plan_from_netbox
from hwaac.plan import build_plan
from hwaac.plan.model import ip_str
from hwaac.render import render_to_dir
from hwaac.validate import load_intent

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INTENT = REPO / "tests/fixtures/intents/valid/netbox-sync.yml"
LUSTRE, NETPLAN = "lustre-client.json", "netplan/60-hwaac-rails.yaml"


def same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    stack = [cmp]
    while stack:
        c = stack.pop()
        if c.left_only or c.right_only or c.diff_files or c.funny_files:
            return False
        stack += c.subdirs.values()
    return True


@pytest.mark.cost(50)
def test_render_from_netbox_follows_what_netbox_holds(synced_nb: Instance, tmp_path: Path) -> None:
    nb = synced_nb  # INTENT's fabric, synced
    plan = build_plan(load_intent(INTENT))
    api = pynetbox.api(nb.url, token=nb.token)

    held, notes = plan_from_netbox(plan, nb.url, nb.token)
    assert notes == []
    render_to_dir(plan, tmp_path / "intent")
    render_to_dir(held, tmp_path / "netbox")
    assert same_tree(tmp_path / "intent", tmp_path / "netbox")

    # Lustre clients: the fixture's storage section (o2ib0 on rails 0 and 1, routes [10.30.0.0/16], lfs1) gives
    # every GPU node the same lustre-client.json from NetBox as from the intent, and its routes in every rail table
    gpu = [n.name for n in plan.nodes if n.kind == "gpu"]
    assert len(gpu) == 4
    for name in gpu:
        from_intent = (tmp_path / "intent/hosts" / name / LUSTRE).read_text()
        assert (tmp_path / "netbox/hosts" / name / LUSTRE).read_text() == from_intent
        doc = json.loads(from_intent)
        ports = [
            lk.a_port
            for lk in sorted(
                (lk for lk in plan.links if lk.kind == "host" and lk.a_device == name), key=lambda lk: lk.rail or 0
            )
        ]
        assert doc["lnet"]["networks"] == [{"net": "o2ib0", "interfaces": ports, "tunables": {}, "lnd_tunables": {}}]
        assert doc["filesystems"][0]["mgs"] == [["10.30.0.1@o2ib", "10.30.1.1@o2ib"], ["10.30.0.2@o2ib"]]
        assert doc["filesystems"][0]["tunables"] == {"osc.lfs1-OST*.max_rpcs_in_flight": "32"}
        netplan = (tmp_path / "netbox/hosts" / name / NETPLAN).read_text()
        assert netplan.count("- to: 10.30.0.0/16\n") == 2  # one per rail table
    storage = json.loads((tmp_path / "intent/plan.json").read_text())["storage"]
    assert storage is not None and json.loads((tmp_path / "netbox/plan.json").read_text())["storage"] == storage

    # a person corrects a leaf's ASN and a host's rail address in NetBox
    leaf = next(s for s in plan.switches if s.role == "leaf")
    dev = api.dcim.devices.get(name=leaf.name)
    dev.custom_fields["hwaac_asn"] = 4200150000
    dev.save()
    host = next(link for link in plan.links if link.kind == "host")
    addr = api.ipam.ip_addresses.get(address=f"{ip_str(host.a_ip)}/{host.prefixlen}")
    new_ip = ip_str(plan.pools.host_links.base + 201)  # in the pool, beyond every planned /31
    addr.address = f"{new_ip}/{host.prefixlen}"
    addr.save()

    env = {**os.environ, "NETBOX_URL": nb.url, "NETBOX_TOKEN": nb.token}
    r = subprocess.run(
        [sys.executable, "-m", "hwaac.cli", "netbox", "render", str(INTENT), "-o", str(tmp_path / "netbox")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    assert f"{leaf.name}: asn {leaf.asn} -> 4200150000 (NetBox)" in r.stderr
    assert f"{host.a_device}:{host.a_port}: address {ip_str(host.a_ip)} -> {new_ip} (NetBox)" in r.stderr
    assert "2 value(s) differ from the intent" in r.stdout
    assert nb.token not in r.stdout + r.stderr
    config = json.loads((tmp_path / "netbox/switches" / leaf.name / "config_db.json").read_text())
    assert config["DEVICE_METADATA"]["localhost"]["bgp_asn"] == "4200150000"
    assert config["BGP_GLOBALS"]["default"]["local_asn"] == "4200150000"
    spines = [
        json.loads((tmp_path / "netbox/switches" / s.name / "config_db.json").read_text())
        for s in plan.switches
        if s.role == "spine"
    ]
    assert spines and all(
        any(n.get("asn") == "4200150000" and n.get("name") == leaf.name for n in c["BGP_NEIGHBOR"].values())
        for c in spines
    )  # peers use the corrected ASN
    netplan = (tmp_path / "netbox/hosts" / host.a_device / NETPLAN).read_text()
    assert f"{new_ip}/{host.prefixlen}" in netplan and f"{ip_str(host.a_ip)}/" not in netplan
    # the storage route of that rail leaves from the corrected address; lustre-client.json holds no address
    assert f"        - to: 10.30.0.0/16\n          via: {ip_str(host.b_ip)}\n          from: {new_ip}\n" in netplan
    assert f"from: {ip_str(host.a_ip)}\n" not in netplan
    assert (tmp_path / "netbox/hosts" / host.a_device / LUSTRE).read_text() == (
        tmp_path / "intent/hosts" / host.a_device / LUSTRE
    ).read_text()

    # a cable NetBox no longer holds stops rendering, and the folder keeps the last good render
    cable = api.dcim.cables.get(label=host.cable_id)
    cable.delete()
    with pytest.raises(NetBoxRecordError, match=host.cable_id):
        plan_from_netbox(plan, nb.url, nb.token)
    r = subprocess.run(
        [sys.executable, "-m", "hwaac.cli", "netbox", "render", str(INTENT), "-o", str(tmp_path / "netbox")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 2 and host.cable_id in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert json.loads((tmp_path / "netbox/switches" / leaf.name / "config_db.json").read_text()) == config
