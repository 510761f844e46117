"""``hwaac netbox export`` and ``hwaac netbox drift`` (:mod:`hwaac.netbox.sync.readback`) against a real NetBox.

Each test gets its own fresh NetBox database; the intent is the small tests/fixtures/intents/valid/netbox-sync.yml.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pynetbox
import pytest

from hwaac.devnetbox.instances import Instance
from hwaac.devnetbox.local import LocalNetBox
from hwaac.netbox.sync import sync_plan
from hwaac.plan import build_plan
from hwaac.plan.model import Plan, ip_str
from hwaac.validate import load_intent

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INTENT = REPO / "tests/fixtures/intents/valid/netbox-sync.yml"
FTAG = "hwaac-fabric-nbsync"


def cli(
    inst: Instance | None, *args: str, url: str | None = None, token: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NETBOX_URL", "NETBOX_TOKEN")}
    env["NETBOX_URL"] = url or (inst.url if inst else "")
    env["NETBOX_TOKEN"] = token or (inst.token if inst else "")
    return subprocess.run(
        [sys.executable, "-m", "hwaac.cli", "netbox", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
    )


def snapshot(c: pynetbox.api) -> dict[str, int]:
    """Object counts and the change log: a read-only command must leave all of them as they were."""
    return {
        "changes": c.core.object_changes.count(),
        "devices": c.dcim.devices.count(),
        "cables": c.dcim.cables.count(),
        "ip-addresses": c.ipam.ip_addresses.count(),
        "prefixes": c.ipam.prefixes.count(),
        "tags": c.extras.tags.count(),
    }


def cable(a: tuple[str, str], b: tuple[str, str]) -> str:
    x, y = sorted((a, b))
    return f"cable {x[0]}:{x[1]} <-> {y[0]}:{y[1]}"


@pytest.mark.cost(75)
def test_after_sync_no_drift_export_is_the_plan_then_hand_edits_drift(synced_nb: Instance, tmp_path: Path) -> None:
    nb = synced_nb  # INTENT's fabric, synced
    plan: Plan = build_plan(load_intent(INTENT))
    c = pynetbox.api(nb.url, token=nb.token)
    before = snapshot(c)

    ok = cli(nb, "drift", str(INTENT))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.strip().splitlines() == [ok.stdout.strip().splitlines()[-1]]
    assert "fabric nbsync: no drift" in ok.stdout and nb.token not in ok.stdout + ok.stderr

    out = tmp_path / "nb.json"
    ex = cli(nb, "export", str(INTENT), "-o", str(out))
    assert ex.returncode == 0, ex.stderr
    text = out.read_text()
    doc = json.loads(text)
    assert nb.token not in text and '"id"' not in text and nb.url not in text
    assert [d["name"] for d in doc["devices"]] == sorted([s.name for s in plan.switches] + [n.name for n in plan.nodes])
    leaf = next(d for d in doc["devices"] if d["name"] == "leaf-p0-su01-r0")
    assert leaf == {
        "name": "leaf-p0-su01-r0",
        "role": "leaf",
        "device_type": leaf["device_type"],
        "site": "nbsync-lab",
        "status": "planned",
        "serial": "",
        "asn": plan.switch_by_name["leaf-p0-su01-r0"].asn,
    }
    assert sorted(tuple(x["ends"]) for x in doc["cables"]) == sorted(
        tuple(sorted([f"{li.a_device}:{li.a_port}", f"{li.b_device}:{li.b_port}"])) for li in plan.links
    )
    assert {x["label"] for x in doc["cables"]} == {li.cable_id for li in plan.links}
    planned_ips = {ip_str(s.loopback) for s in plan.switches} | {
        ip_str(x) for li in plan.links for x in (li.a_ip, li.b_ip)
    }
    assert {x["address"].split("/")[0] for x in doc["ip-addresses"]} == planned_ips
    li0 = plan.links[0]
    assert (
        next(x for x in doc["ip-addresses"] if x["address"].startswith(ip_str(li0.a_ip) + "/"))["interface"]
        == f"{li0.a_device}:{li0.a_port}"
    )
    assert len(doc["prefixes"]) == len([p for p in doc["prefixes"] if p["status"] == "container"]) >= 3
    assert len(doc["asns"]) == len({s.asn for s in plan.switches})
    iface = next(i for i in doc["interfaces"] if (i["device"], i["name"]) == (li0.a_device, li0.a_port))
    assert iface["cable"] == li0.cable_id and iface["addresses"] == [f"{ip_str(li0.a_ip)}/{li0.prefixlen}"]
    # deterministic: the same NetBox exports the same bytes (stdout with -o -)
    assert cli(nb, "export", str(INTENT), "-o", "-").stdout == text
    assert snapshot(c) == before  # read only

    # hand edits: a person's fields on an owned device (not drift) ...
    leaf_dev = c.dcim.devices.get(name="leaf-p0-su01-r0")
    leaf_dev.update({"serial": "BY-HAND-1", "comments": "rack 12, row B"})
    # ... an owned address moved to another interface, a relabelled cable, a deleted cable, an extra owned device
    dev, port, addr = (
        (li0.a_device, li0.a_port, li0.a_ip)
        if li0.a_device in plan.switch_by_name
        else (li0.b_device, li0.b_port, li0.b_ip)
    )
    ip = c.ipam.ip_addresses.get(address=f"{ip_str(addr)}/{li0.prefixlen}")
    busy = (
        {li.a_port for li in plan.links if li.a_device == dev}
        | {li.b_port for li in plan.links if li.b_device == dev}
        | {"Loopback0"}
    )
    other = next(i for i in c.dcim.interfaces.filter(device=dev) if i.name not in busy)
    ip.update({"assigned_object_type": "dcim.interface", "assigned_object_id": other.id})
    li1, li2 = plan.links[1], plan.links[2]
    cab1 = c.dcim.cables.get(label=li1.cable_id)
    cab1.update({"label": "relabelled-by-hand"})
    c.dcim.cables.get(label=li2.cable_id).delete()
    node = c.dcim.devices.get(name=plan.nodes[0].name)
    # tagged as the fabric's by hand, not in service (an active one would be a conflict: docs/netbox-ownership.md)
    c.dcim.devices.create(
        name="rogue-01",
        device_type=node.device_type.id,
        role=node.role.id,
        site=node.site.id,
        status="planned",
        tags=[{"slug": "hwaac"}, {"slug": FTAG}],
    )
    before = snapshot(c)

    dr = cli(nb, "drift", str(INTENT))
    assert dr.returncode == 5, dr.stdout + dr.stderr
    lines = dr.stdout.strip().splitlines()
    print(dr.stdout)
    assert lines == [
        "devices:",
        "  extra device rogue-01",
        "cables:",
        f"  missing {cable((li2.a_device, li2.a_port), (li2.b_device, li2.b_port))}",
        f"  changed {cable((li1.a_device, li1.a_port), (li1.b_device, li1.b_port))}: "
        f"label: relabelled-by-hand -> {li1.cable_id}",
        "ip-addresses:",
        f"  changed IP address {ip_str(addr)}: interface: {dev}:{other.name} -> {dev}:{port}",
        lines[-1],
    ], dr.stdout
    assert lines[-1].startswith("fabric nbsync: 4 objects drift from the plan (changed 2, extra 1, missing 1; ")
    assert "serial" not in dr.stdout and "comments" not in dr.stdout and nb.token not in dr.stdout + dr.stderr
    doc2 = json.loads(cli(nb, "export", str(INTENT)).stdout)
    assert "rogue-01" in [d["name"] for d in doc2["devices"]]
    assert next(d for d in doc2["devices"] if d["name"] == "leaf-p0-su01-r0")["serial"] == "BY-HAND-1"
    assert len(doc2["cables"]) == len(plan.links) - 1
    assert snapshot(c) == before  # drift and export never write

    # a sync repairs what drift listed; the person's serial stays
    sync_plan(plan, nb.url, nb.token)
    again = cli(nb, "drift", str(INTENT))
    assert again.returncode == 0, again.stdout
    assert c.dcim.devices.get(name="leaf-p0-su01-r0").serial == "BY-HAND-1"


def test_connection_errors_are_one_line_exit_2(local_netbox: LocalNetBox) -> None:
    secret = "nbt_abcdefabcdef.0123456789abcdef0123456789abcdef01234567"
    for cmd in ("drift", "export"):
        down = cli(None, cmd, str(INTENT), url="http://127.0.0.1:9", token=secret)
        assert down.returncode == 2, down.stdout + down.stderr
        assert len(down.stderr.strip().splitlines()) == 1 and secret not in down.stderr + down.stdout
        assert down.stderr.startswith(f"hwaac netbox {cmd}: "), down.stderr
    with local_netbox.lease():  # the main instance: test_netbox_local's down/up test must not stop it meanwhile
        bad = cli(None, "drift", str(INTENT), url=local_netbox.url, token=secret)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "token" in bad.stderr and secret not in bad.stderr and secret.split(".")[1] not in bad.stderr
