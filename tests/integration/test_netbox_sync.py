"""``hwaac netbox sync`` (:mod:`hwaac.netbox.sync`) against a real NetBox 4.7.3.

Each test gets its own fresh NetBox database (tests of one module may run on different xdist workers, so no
test relies on another's state). The small intent tests/fixtures/intents/valid/netbox-sync.yml keeps NetBox's
own cost (~0.5 s per device on 2 cores) low.
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pynetbox
import pytest
import yaml

from hwaac.devnetbox import procs
from hwaac.devnetbox.instances import Instance
from hwaac.devnetbox.local import LocalNetBox
from hwaac.netbox.sync import SyncConflict, SyncError, engine, format_report, sync_plan
from hwaac.plan import build_plan
from hwaac.plan.model import Plan, ip_str
from hwaac.plan.ports import port_table
from hwaac.validate import load_intent, load_intent_source

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INTENT = REPO / "tests/fixtures/intents/valid/netbox-sync.yml"
FTAG = "hwaac-fabric-nbsync"
LAB_SWITCH = "Lab-32x400G"  # the 32-port model of INTENT


def plan_of(tmp_path: Path, downlinks: int | None = None, **fabric: object) -> Plan:
    data = yaml.safe_load(INTENT.read_text())
    data["fabric"].update(fabric)
    if downlinks is not None:
        data["switches"]["leaf"]["downlinks"] = downlinks
    path = tmp_path / f"fabric-{len(list(tmp_path.iterdir()))}.yml"
    path.write_text(yaml.safe_dump(data))
    return build_plan(load_intent(path))


def cli(
    inst: Instance | None, *args: str, url: str | None = None, token: str | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NETBOX_URL", "NETBOX_TOKEN")}
    env["NETBOX_URL"] = url or (inst.url if inst else "")
    env["NETBOX_TOKEN"] = token or (inst.token if inst else "")
    return subprocess.run(
        [sys.executable, "-m", "hwaac.cli", "netbox", "sync", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
    )


def api(inst: Instance) -> pynetbox.api:
    return pynetbox.api(inst.url, token=inst.token)


def expected(plan: Plan) -> dict[str, int]:
    """Object counts computed from the plan directly (not through hwaac.netbox.sync)."""
    p = plan.pools
    pools = [
        x
        for x in (
            p.loopback_leaf,
            p.loopback_spine,
            p.loopback_super_spine,
            p.leaf_spine,
            p.spine_super_spine,
            p.host_links,
        )
        if x is not None
    ]
    addresses = {ip_str(s.loopback) for s in plan.switches} | {
        ip_str(x) for link in plan.links for x in (link.a_ip, link.b_ip)
    }
    ports = len(port_table(plan.design.leaf_model)) + 1  # + Loopback0
    return {
        "devices": len(plan.switches) + len(plan.nodes),
        "cables": len(plan.links),
        "prefixes": len(pools),
        "ip-addresses": len(addresses),
        "asns": len({s.asn for s in plan.switches}),
        "interfaces": ports * len(plan.switches) + plan.design.rails * len(plan.nodes),
    }


def link_ends(plan: Plan) -> dict[str, tuple[str, str]]:
    """Every planned link address -> the (device, port) it is on."""
    return {
        ip_str(ip): (dev, port)
        for link in plan.links
        for ip, dev, port in ((link.a_ip, link.a_device, link.a_port), (link.b_ip, link.b_device, link.b_port))
    }


def counts(inst: Instance, tag: str = FTAG, site: str = "nbsync-lab") -> dict[str, int]:
    c = api(inst)
    return {
        "devices": c.dcim.devices.count(tag=tag),
        "cables": c.dcim.cables.count(tag=tag),
        "prefixes": c.ipam.prefixes.count(tag=tag),
        "ip-addresses": c.ipam.ip_addresses.count(tag=tag),
        "asns": c.ipam.asns.count(tag=tag),
        "interfaces": c.dcim.interfaces.count(site=site),
    }


def demo_half_su() -> Plan:
    """The README's demo topology (2 tiers, 8 rails, leaves non-blocking) at half an SU on 32-port lab switches:
    32 devices, 256 cables, 528 addresses, 884 objects in 15 write requests. The whole demo (2 SUs, SN5600s) is
    minutes of NetBox work on 2 cores and is measured by benchmarks/netbox_sync.py; NetBox's cost grows with the
    objects (every switch port is made from its device type), while the bulk ratio only needs enough of them."""
    data = yaml.safe_load((REPO / "inventory" / "demo" / "fabric.yml").read_text())
    assert data["fabric"]["su_count"] == 2 and data["fabric"]["nodes_per_su"] == 32
    data["fabric"].update(su_count=1, nodes_per_su=16, su_capacity=2)
    data["switches"]["leaf"].update(model=LAB_SWITCH, downlinks=16)
    data["switches"]["spine"]["model"] = LAB_SWITCH
    data["switch_models"] = yaml.safe_load(INTENT.read_text())["switch_models"]
    return build_plan(load_intent_source(yaml.safe_dump(data, sort_keys=False), "demo-half-su.yml"))


@pytest.mark.cost(170)
def test_first_sync_of_the_demo_creates_exactly_the_planned_objects(nb: Instance) -> None:
    plan = demo_half_su()
    assert (len(plan.switches), len(plan.nodes), len(plan.links)) == (16, 16, 256)
    first = sync_plan(plan, nb.url, nb.token)
    assert counts(nb, tag="hwaac-fabric-demo", site="demo-lab") == expected(plan)
    assert first.objects_written() / first.writes >= 50, first.requests  # <= 1 request per 50 objects
    noop = sync_plan(plan, nb.url, nb.token)
    assert noop.writes == 0 and not noop.changed, noop.requests


@pytest.mark.cost(80)
def test_dry_run_first_sync_noop_grow_and_shrink(nb: Instance, tmp_path: Path) -> None:
    plan1 = plan_of(tmp_path)
    # dry run: lists the creates, writes nothing
    dry = cli(nb, str(INTENT), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "devices: 7 to create" in dry.stdout and "+ device leaf-p0-su01-r0" in dry.stdout, dry.stdout
    assert "+ cable gpu-su01-h01:rail0 <-> leaf-p0-su01-r0:Ethernet0" in dry.stdout
    assert "dry run, nothing written" in dry.stdout and "POST" not in dry.stdout.splitlines()[-1]
    assert api(nb).dcim.devices.count() == 0 and api(nb).extras.tags.count() == 0

    # first sync: exactly the planned objects
    first = sync_plan(plan1, nb.url, nb.token)
    print("\n".join(format_report(first, "nbsync")))
    assert counts(nb) == expected(plan1)
    assert first.writes <= 30, first.requests  # bulk: about two write requests per object type
    assert first.objects_written() / first.writes >= 5
    leaf = api(nb).dcim.devices.get(name="leaf-p0-su01-r0")
    assert leaf.custom_fields["hwaac_asn"] == plan1.switch_by_name["leaf-p0-su01-r0"].asn
    assert {t.slug for t in leaf.tags} == {"hwaac", FTAG, "hwaac-plane-nbsync-0"}  # owner, fabric, its plane
    ip = api(nb).ipam.ip_addresses.get(address=f"{ip_str(plan1.links[0].a_ip)}/31")
    assert (ip.assigned_object.device.name, ip.assigned_object.name) == (plan1.links[0].a_device, plan1.links[0].a_port)

    # second sync: nothing written, and it says so
    again = cli(nb, str(INTENT))
    assert again.returncode == 0, again.stderr
    assert "no changes" in again.stdout and "POST" not in again.stdout and "PATCH" not in again.stdout, again.stdout
    noop = sync_plan(plan1, nb.url, nb.token)
    assert noop.writes == 0 and not noop.changed, noop.requests
    print(f"no-op re-sync: {noop.seconds:.2f} s, {sum(noop.requests.values())} requests")

    # grow by one SU: only the new objects
    ids_before = {d.name: d.id for d in api(nb).dcim.devices.filter(tag=FTAG)}
    plan2 = plan_of(tmp_path, su_count=2)
    grow = sync_plan(plan2, nb.url, nb.token)
    new_devices = {s.name for s in plan2.switches} | {n.name for n in plan2.nodes}
    new_devices -= set(ids_before)
    assert grow.counts("devices") == (len(new_devices), 0, 0)
    assert grow.counts("cables") == (len(plan2.links) - len(plan1.links), 0, 0)
    assert grow.counts("ip-addresses")[1:] == (0, 0) and grow.counts("prefixes") == (0, 0, 0)
    assert counts(nb) == expected(plan2)
    assert {d.name: d.id for d in api(nb).dcim.devices.filter(tag=FTAG) if d.name in ids_before} == ids_before

    # shrink back: deletes only owned objects that left the plan; a hand-made device stays
    c = api(nb)
    node_type = c.dcim.devices.get(name="gpu-su01-h01").device_type.id
    hand = c.dcim.devices.create(
        name="by-hand-01",
        device_type=node_type,
        role=c.dcim.device_roles.get(slug="gpu-node").id,
        site=c.dcim.sites.get(slug="nbsync-lab").id,
        serial="HAND1",
    )
    shrink = sync_plan(plan1, nb.url, nb.token)
    assert shrink.counts("devices") == (0, 0, len(new_devices))
    assert counts(nb) == {**expected(plan1), "interfaces": expected(plan1)["interfaces"] + plan1.design.rails}
    assert c.dcim.devices.get(hand.id).serial == "HAND1"
    assert sync_plan(plan1, nb.url, nb.token).writes == 0

    # the SU re-planned at 2 nodes: host addresses of the removed nodes now belong to kept ones (NetBox deletes an
    # interface's addresses with it, so the sync must move them before it deletes the nodes), keeping their ids
    plan3 = plan_of(tmp_path, downlinks=2, nodes_per_su=2)
    gone = {n.name for n in plan1.nodes} - {n.name for n in plan3.nodes}
    before, after = link_ends(plan1), link_ends(plan3)
    moved = {ip: end for ip, end in after.items() if ip in before and before[ip][0] in gone}
    assert moved, "the re-plan moves no address off a removed node: the step proves nothing"
    ids = {ip: c.ipam.ip_addresses.get(address=f"{ip}/31").id for ip in moved}
    renumbered = sync_plan(plan3, nb.url, nb.token)
    assert renumbered.counts("devices") == (0, 0, len(gone))
    assert counts(nb) == {**expected(plan3), "interfaces": expected(plan3)["interfaces"] + plan3.design.rails}
    for ip, (device, port) in moved.items():
        rec = c.ipam.ip_addresses.get(address=f"{ip}/31")
        assert (rec.id, rec.assigned_object.device.name, rec.assigned_object.name) == (ids[ip], device, port)
    assert sync_plan(plan3, nb.url, nb.token).writes == 0


@pytest.mark.cost(60)
def test_hand_made_objects_are_adopted_and_a_conflicting_address_stops_the_sync(nb: Instance, tmp_path: Path) -> None:
    # one synced fabric for both points: a person's objects are adopted, then (on other nodes) a person's
    # object that holds a planned address stops the next sync before it writes anything
    plan = plan_of(tmp_path)
    sync_plan(plan, nb.url, nb.token)
    c = api(nb)
    old = c.dcim.devices.get(name="gpu-su01-h02")
    dtype, role, site = old.device_type.id, old.role.id, old.site.id
    old.delete()
    # a person racks the node with its serial, enters a prefix and an address by hand (no tags)
    dev = c.dcim.devices.create(
        name="gpu-su01-h02",
        device_type=dtype,
        role=role,
        site=site,
        serial="SER-42",
        asset_tag="A-42",
        comments="racked by Ann",
    )
    c.ipam.prefixes.get(prefix=plan.pools.host_links.cidr).delete()
    pfx = c.ipam.prefixes.create(prefix=plan.pools.host_links.cidr, status="active", description="typed by Ann")
    link = next(x for x in plan.links if x.a_device == "gpu-su01-h02")
    addr = f"{ip_str(link.a_ip)}/31"
    assert c.ipam.ip_addresses.get(address=addr) is None  # went with the old device's interfaces
    iface = c.dcim.interfaces.get(device_id=dev.id, name=link.a_port)
    ip = c.ipam.ip_addresses.create(
        address=addr, assigned_object_type="dcim.interface", assigned_object_id=iface.id, description="typed by Ann"
    )
    rep = sync_plan(plan, nb.url, nb.token)
    assert rep.counts("devices") == (0, 1, 0) and rep.counts("prefixes") == (0, 1, 0)
    dev2 = c.dcim.devices.get(name="gpu-su01-h02")
    assert dev2.id == dev.id and (dev2.serial, dev2.asset_tag, dev2.comments) == ("SER-42", "A-42", "racked by Ann")
    adopted = {"hwaac", FTAG, "hwaac-plane-nbsync-0", "hwaac-adopted"}  # owned, and made by a person
    assert {t.slug for t in dev2.tags} == adopted
    pfx2 = c.ipam.prefixes.get(pfx.id)
    assert pfx2.description == "typed by Ann" and {t.slug for t in pfx2.tags} == adopted
    assert pfx2.status.value == "active"  # the person's status, not the plan's container
    ip2 = c.ipam.ip_addresses.get(ip.id)
    assert ip2.description == "typed by Ann" and {t.slug for t in ip2.tags} == adopted
    assert counts(nb) == expected(plan)  # re-cabled and re-addressed, no duplicates
    assert sync_plan(plan, nb.url, nb.token).writes == 0
    # an owned address moved by hand to another interface is moved back (the diff reads where it sits)
    s0, s1 = plan.switches[0], plan.switches[1]
    lo = c.ipam.ip_addresses.get(address=f"{ip_str(s0.loopback)}/32")
    lo.update(
        {
            "assigned_object_type": "dcim.interface",
            "assigned_object_id": c.dcim.interfaces.get(device=s1.name, name="Loopback0").id,
        }
    )
    back = sync_plan(plan, nb.url, nb.token)
    assert back.counts("ip-addresses") == (0, 1, 0) and back.writes == 1, back.requests
    lo2 = c.ipam.ip_addresses.get(lo.id)
    assert (lo2.assigned_object.device.name, lo2.assigned_object.name) == (s0.name, "Loopback0")

    # a conflicting address stops the sync: nothing is written
    node = c.dcim.devices.get(name="gpu-su01-h01")
    other = c.dcim.devices.create(
        name="lab-server-9", device_type=node.device_type.id, role=node.role.id, site=node.site.id
    )
    link = next(x for x in plan.links if x.a_device == "gpu-su01-h01")
    addr = f"{ip_str(link.a_ip)}/31"
    c.ipam.ip_addresses.get(address=addr).delete()
    held = c.ipam.ip_addresses.create(
        address=addr,
        assigned_object_type="dcim.interface",
        assigned_object_id=c.dcim.interfaces.get(device_id=other.id, name="rail0").id,
    )
    # another planned address is missing too: it must not be written either
    link2 = next(x for x in plan.links if x.a_device == "gpu-su01-h03")
    c.ipam.ip_addresses.get(address=f"{ip_str(link2.a_ip)}/31").delete()
    r = cli(nb, str(INTENT))
    assert r.returncode == 4, r.stdout + r.stderr
    first = r.stderr.splitlines()[0]
    assert "conflict" in first and ip_str(link.a_ip) in first and "gpu-su01-h01:rail0" in first, first
    assert "lab-server-9:rail0" in first and f"id {held.id}" in first, first
    assert c.ipam.ip_addresses.get(address=f"{ip_str(link2.a_ip)}/31") is None
    with pytest.raises(SyncConflict):
        sync_plan(plan, nb.url, nb.token)
    assert c.ipam.ip_addresses.count(tag=FTAG) == expected(plan)["ip-addresses"] - 2


def test_wrong_token_and_unreachable_url_are_one_line_errors(local_netbox: LocalNetBox) -> None:
    wrong = "nbt_AAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
    with local_netbox.lease():
        r = cli(None, str(INTENT), url=local_netbox.url, token=wrong)
    assert r.returncode == 2 and r.stdout == "", r.stdout + r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "rejected the API token" in r.stderr, r.stderr
    assert "BBBBBBBB" not in r.stderr and local_netbox.token.split(".")[1] not in r.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = cli(None, str(INTENT), url=f"http://127.0.0.1:{port}", token=wrong)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "unreachable" in r.stderr, r.stderr
    assert "BBBBBBBB" not in r.stderr
    bad = cli(
        None, str(REPO / "tests/fixtures/intents/valid/does-not-exist.yml"), url=f"http://127.0.0.1:{port}", token=wrong
    )
    assert bad.returncode == 1, bad.stderr


def test_unsupported_netbox_version_is_a_one_line_error() -> None:
    """A server on 127.0.0.1 that answers /api/status/ as NetBox 3.7.0: nothing else is asked of it."""
    seen: list[str] = []

    class Old(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            ok = self.path.split("?")[0] == "/api/status/"
            body = json.dumps(
                {"netbox-version": "3.7.0", "python-version": "3.11.4"} if ok else {"detail": "Not found."}
            ).encode()
            self.send_response(200 if ok else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Old)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        token = "nbt_AAAAAAAAAAAA.CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"
        r = cli(None, str(INTENT), url=f"http://127.0.0.1:{server.server_address[1]}", token=token)
    finally:
        server.shutdown()
        server.server_close()
    assert r.returncode == 2 and r.stdout == "", r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "3.7.0" in lines[0] and "4.7." in lines[0], r.stderr
    assert "CCCCCCCC" not in r.stderr
    assert seen and all(p.startswith("/api/status/") for p in seen), seen  # no write, no read beyond the probe


@pytest.mark.cost(50)
def test_server_killed_mid_write_then_the_next_sync_converges(
    nb: Instance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = plan_of(tmp_path)
    manager = nb._manager
    assert manager is not None
    server = manager._gunicorn(next(r for r in manager.records() if r["database"] == nb.database))
    pgid = os.getpgid(server.pid())  # gunicorn runs in its own session: master and workers
    real_call = engine.Client.call
    fired = []

    def call(self, what, kind, fn):  # kill NetBox 0.3 s into the cables' bulk POST
        if what == "POST" and kind == "cables" and not fired:
            fired.append(threading.Timer(0.3, os.killpg, (pgid, signal.SIGKILL)))
            fired[0].start()
        return real_call(self, what, kind, fn)

    monkeypatch.setattr(engine.Client, "call", call)
    with pytest.raises(SyncError) as err:
        sync_plan(plan, nb.url, nb.token)
    msg = str(err.value)
    assert "\n" not in msg and "cables" in msg and nb.token.split(".")[1] not in msg, msg
    monkeypatch.setattr(engine.Client, "call", real_call)
    deadline = time.monotonic() + 30
    while not procs.port_free(server.port) and time.monotonic() < deadline:
        time.sleep(0.2)
    server.start()
    rep = sync_plan(plan, nb.url, nb.token)
    assert rep.counts("devices") == (0, 0, 0)
    assert counts(nb) == expected(plan)  # no duplicates
    assert api(nb).dcim.cables.count() == len(plan.links)
    assert sync_plan(plan, nb.url, nb.token).writes == 0
