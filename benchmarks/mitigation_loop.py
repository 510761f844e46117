"""The closed mitigation loop on the demo twin, timed over injected faults: MTTD (fault injected to the HwaacMitigate
alert held by Alertmanager) and MTTM (that alert to the link drained at both ends: no route in either end's kernel
FIB uses it, GRACEFUL_SHUTDOWN in effect), and the host pairs disconnected while it ran (a pair whose probes all went
unanswered in some round of the loop's prober, across every drain and undrain).

Everything real (``hwaac.lab.loop``); each fault is 5 % loss on a leaf-spine cable of another leaf. Targets on
the twin (2 cores): MTTD <= 20 s, MTTM <= 20 s, 0 host pairs disconnected; exit 1 when one is missed, or with
``--netbox`` when a drain or undrain was not journalled in NetBox. Method and figures: benchmarks/README.md.

    .venv/bin/python benchmarks/mitigation_loop.py [--faults 5] [--loss 5] [--name mitloop] [--keep DIR] [--netbox]
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from hwaac.cli import main as hwaac_main
from hwaac.clikit import fail
from hwaac.lab import Lab, faults
from hwaac.lab.down import down
from hwaac.lab.loop import Loop, Settings
from hwaac.lab.status import converge, routes_via
from hwaac.lab.up import up
from hwaac.plan import build_plan
from hwaac.validate import load_intent

DEMO = Path(__file__).resolve().parents[1] / "inventory" / "demo"
TARGET_S = 20.0


def _decided(loop: Loop, seen: int, cable: str) -> float:
    """When the sweep that drained ``cable`` decided (its decision log's time)."""
    d = next(d for d in loop.decisions()[seen:] if d["target"] == cable and d["action"] == "drain_link")
    return datetime.fromisoformat(d["time"]).timestamp()


def _state(lab: Lab, device: str, peer: str) -> str:
    return json.loads(lab.vty(device, "bgpd", "show bgp summary json"))["ipv4Unicast"]["peers"][peer]["state"]


def _journal(api: Any, link: Any) -> tuple[dict[str, list[str]], str]:
    """The mitigation entries' kinds on each of the link's switches and its cable, oldest first, and its status."""
    (cable,) = api.dcim.cables.filter(label=link.cable_id)
    objects = {
        link.a_device: ("dcim.device", api.dcim.devices.get(name=link.a_device).id),
        link.b_device: ("dcim.device", api.dcim.devices.get(name=link.b_device).id),
        link.cable_id: ("dcim.cable", cable.id),
    }
    entries = {
        name: [
            e.kind.value
            for e in sorted(
                api.extras.journal_entries.filter(assigned_object_type=t, assigned_object_id=i), key=lambda e: e.id
            )
            if "hwaac-mitigation" in {tag.slug for tag in e.tags}
        ]  # a filter on a tag not made yet is a 400
        for name, (t, i) in objects.items()
    }
    return entries, cable.status.value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--faults", type=int, default=5)
    ap.add_argument("--loss", type=float, default=5.0, help="loss in %% on each faulty cable (default 5)")
    ap.add_argument("--name", default="mitloop", help="the twin's name (default mitloop)")
    ap.add_argument("--keep", metavar="DIR", help="copy the loop's logs, decision log and state here")
    ap.add_argument(
        "--netbox",
        action="store_true",
        help="record in NetBox too and check the journals (NETBOX_URL "
        "and NETBOX_TOKEN, else the local NetBox holding the demo)",
    )
    args = ap.parse_args(argv)
    plan = build_plan(load_intent(DEMO))
    settings, api, journals = Settings(), None, []
    if args.netbox:
        import pynetbox

        from hwaac.netbox.connection import netbox_target
        from hwaac.netbox.errors import NetBoxError

        try:
            target = netbox_target()
        except NetBoxError as exc:
            return fail("--netbox", exc)
        api = pynetbox.api(target.url, token=target.token)
        if api.dcim.devices.count(name=plan.switches[0].name) == 0:
            return fail("--netbox", f"{target.url} does not hold the demo: run make demo-netbox first")
        settings = Settings(netbox=(target.url, target.token))
    leaves = sorted({lk.a_device for lk in plan.links if lk.kind == "leaf_spine"})
    picks = [
        next(lk for lk in plan.links if lk.kind == "leaf_spine" and lk.a_device == leaves[(3 * n + 1) % len(leaves)])
        for n in range(args.faults)
    ]
    rows = []
    with tempfile.TemporaryDirectory(prefix="mitloop-") as tmp:
        render = Path(tmp) / "demo"
        assert hwaac_main(["plan", str(DEMO), "-o", str(render)]) == 0
        down(args.name)
        try:
            lab = up(render, name=args.name)
            converge(lab, timeout=120)
            with Loop(lab, plan, DEMO, settings, log=print) as loop:
                # the loop's first sweep (its first tick) warms what a long-running loop has warm: ansible-runner,
                # the NetBox workers' first request; a fault before it would time that too
                loop.wait(lambda: (loop.state / "state.json").exists(), 120, name="the rulebook's first sweep")
                for n, link in enumerate(picks, 1):
                    leaf, spine = link.a_device, link.b_device
                    leaf_ip, spine_ip = (str(ipaddress.IPv4Address(x)) for x in (link.a_ip, link.b_ip))
                    seen = len(loop.decisions())
                    had = _journal(api, link)[0] if api is not None else {}
                    faults.fail_link(lab, link.cable_id, mode="netem", loss=args.loss)
                    t_fault = time.time()
                    try:
                        _, t_alert = loop.wait(
                            lambda c=link.cable_id: [a for a in loop.alerts() if a["labels"].get("cable") == c],
                            180,
                            name=f"the alert on {link.cable_id}",
                        )
                        _, t_moved = loop.wait(
                            lambda lf=leaf, sp=spine, li=leaf_ip, si=spine_ip: (
                                routes_via(lab, lf, si) == 0 and routes_via(lab, sp, li) == 0
                            ),
                            180,
                            poll=0.1,
                            name=f"{link.cable_id} drained at both ends",
                        )
                        _, t_shut = loop.wait(
                            lambda lf=leaf, si=spine_ip: _state(lab, lf, si) == "Idle (Admin)", 120, poll=0.5
                        )
                    finally:
                        faults.restore(lab, link.cable_id)
                    _, t_back = loop.wait(
                        lambda lf=leaf, si=spine_ip: (
                            _state(lab, lf, si) == "Established" and routes_via(lab, lf, si) > 0
                        ),
                        240,
                    )
                    loop.wait(
                        lambda k=seen, c=link.cable_id: [
                            d
                            for d in loop.decisions()[k:]
                            if d["target"] == c and d["action"] == "undrain_link" and d.get("outcome") == "done"
                        ],
                        120,
                        name=f"the undrain of {link.cable_id} logged (after its NetBox record)",
                    )
                    row = {
                        "fault": n,
                        "cable": link.cable_id,
                        "mttd": t_alert - t_fault,
                        "mttm": t_moved - t_alert,
                        "decided": _decided(loop, seen, link.cable_id) - t_alert,
                        "shut": t_shut - t_alert,
                        "back": t_back - t_fault,
                    }
                    if api is not None:
                        entries, status = _journal(api, link)
                        new = {k: v[len(had.get(k, [])) :] for k, v in entries.items()}
                        ok = all(v == ["warning", "info"] for v in new.values()) and status == "connected"
                        journals.append((link.cable_id, ok))
                        print(
                            f"  NetBox: new journal entries {new}, cable {status}"
                            + (
                                ""
                                if ok
                                else ": expected a warning (drain) then an info (undrain) on each, the cable connected"
                            ),
                            flush=True,
                        )
                    rows.append(row)
                    print(
                        f"fault {n}: {link.cable_id} ({leaf} - {spine}): MTTD {row['mttd']:.1f} s, "
                        f"MTTM {row['mttm']:.1f} s (decided {row['decided']:.1f} s after the alert), "
                        f"sessions shut {row['shut']:.1f} s after the alert, "
                        f"back in service {row['back']:.1f} s after the fault",
                        flush=True,
                    )
                cut = sorted({p for r in loop.rounds for p in r.cut})
                rounds = len(loop.rounds)
                refused = [d for d in loop.decisions() if not d["allowed"] and d["rule"] != "hold_down"]
                failed = [d for d in loop.decisions() if d.get("outcome", "done") != "done"]
        finally:
            if args.keep:
                keep = Path(args.keep)
                keep.mkdir(parents=True, exist_ok=True)
                for path in (lab.folder / "loop").glob("*.log"):
                    shutil.copy(path, keep)
                if (lab.folder / "loop" / "state").is_dir():
                    shutil.copytree(lab.folder / "loop" / "state", keep / "state", dirs_exist_ok=True)
            down(args.name)
    mttd = [r["mttd"] for r in rows]
    mttm = [r["mttm"] for r in rows]
    print(
        f"\n{len(rows)} faults: MTTD median {statistics.median(mttd):.1f} s, max {max(mttd):.1f} s; "
        f"MTTM median {statistics.median(mttm):.1f} s, max {max(mttm):.1f} s; host pairs disconnected: "
        f"{len(cut)} (over {rounds} probe rounds of 1,024 flows); decisions refused: {len(refused)}, carried out "
        f"but failed: {len(failed)}"
    )
    missed = (
        [f"MTTD {max(mttd):.1f} s > {TARGET_S:g} s"] * (max(mttd) > TARGET_S)
        + [f"MTTM {max(mttm):.1f} s > {TARGET_S:g} s"] * (max(mttm) > TARGET_S)
        + [f"{len(cut)} host pairs disconnected: {cut[:5]}"] * bool(cut)
        + [f"NetBox journals missing for {c}" for c, ok in journals if not ok]
    )
    for m in missed:
        print(f"target missed: {m}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
