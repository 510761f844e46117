"""Rendering from what NetBox holds (``hwaac netbox render``, :func:`hwaac.netbox.source.plan_from_netbox`): when
NetBox matches the plan the files equal the intent's; a value corrected in NetBox is what the configs carry; a
missing cable stops rendering and names it."""

from __future__ import annotations

import filecmp
import json
import os
import subprocess
import sys
from pathlib import Path

import pynetbox
import pytest

from hwaac.netbox.instances import Instance
from hwaac.netbox.source import NetBoxRecordError, plan_from_netbox
from hwaac.netbox.sync import sync_plan
from hwaac.plan import build_plan
from hwaac.plan.model import ip_str
from hwaac.render import render_to_dir
from hwaac.validate import load_intent

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INTENT = REPO / "tests/fixtures/intents/valid/netbox-sync.yml"


def same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    stack = [cmp]
    while stack:
        c = stack.pop()
        if c.left_only or c.right_only or c.diff_files or c.funny_files:
            return False
        stack += c.subdirs.values()
    return True


def test_render_from_netbox_follows_what_netbox_holds(nb: Instance, tmp_path: Path) -> None:
    plan = build_plan(load_intent(INTENT))
    sync_plan(plan, nb.url, nb.token)
    api = pynetbox.api(nb.url, token=nb.token)

    held, notes = plan_from_netbox(plan, nb.url, nb.token)
    assert notes == []
    render_to_dir(plan, tmp_path / "intent")
    render_to_dir(held, tmp_path / "netbox")
    assert same_tree(tmp_path / "intent", tmp_path / "netbox")

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
    r = subprocess.run([sys.executable, "-m", "hwaac.cli", "netbox", "render", str(INTENT), "-o",
                        str(tmp_path / "netbox")], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert f"{leaf.name}: asn {leaf.asn} -> 4200150000 (NetBox)" in r.stderr
    assert f"{host.a_device}:{host.a_port}: address {ip_str(host.a_ip)} -> {new_ip} (NetBox)" in r.stderr
    assert "2 value(s) differ from the intent" in r.stdout
    assert nb.token not in r.stdout + r.stderr
    config = json.loads((tmp_path / "netbox/switches" / leaf.name / "config_db.json").read_text())
    assert config["DEVICE_METADATA"]["localhost"]["bgp_asn"] == "4200150000"
    assert config["BGP_GLOBALS"]["default"]["local_asn"] == "4200150000"
    spines = [json.loads((tmp_path / "netbox/switches" / s.name / "config_db.json").read_text())
              for s in plan.switches if s.role == "spine"]
    assert spines and all(any(n.get("asn") == "4200150000" and n.get("name") == leaf.name
                              for n in c["BGP_NEIGHBOR"].values()) for c in spines)  # peers use the corrected ASN
    netplan = (tmp_path / "netbox/hosts" / host.a_device / "netplan/60-hwaac-rails.yaml").read_text()
    assert f"{new_ip}/{host.prefixlen}" in netplan and f"{ip_str(host.a_ip)}/" not in netplan

    # a cable NetBox no longer holds stops rendering, and the folder keeps the last good render
    cable = api.dcim.cables.get(label=host.cable_id)
    cable.delete()
    with pytest.raises(NetBoxRecordError, match=host.cable_id):
        plan_from_netbox(plan, nb.url, nb.token)
    r = subprocess.run([sys.executable, "-m", "hwaac.cli", "netbox", "render", str(INTENT), "-o",
                        str(tmp_path / "netbox")], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and host.cable_id in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert json.loads((tmp_path / "netbox/switches" / leaf.name / "config_db.json").read_text()) == config
