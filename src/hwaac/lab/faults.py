"""Failure injection: real effects on the lab, each recorded in lab.json so ``restore`` (and ``down``) undo it.

- link down: ``ip -n NS link set IF down`` at both ends; loss/delay: ``tc -n NS qdisc replace dev IF root netem``
  at both ends (tc-netem(8)); loss alone where the kernel has no netem: an nftables netdev ingress chain at both
  ends dropping that share at random (nft(8) ``numgen random``); flap: a bounded ``sh`` loop in its own process
  group, recorded, ended by restore;
- switch: its bgpd and zebra stopped by pid (SIGTERM: bgpd sends its peers a Cease, as a stopped daemon does);
  restore starts them again with the same configuration files;
- node: every link of the node down at both ends.
A port goes back up only when no other fault still holds it down.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import subprocess
from collections.abc import Callable, Collection, Iterable
from datetime import UTC, datetime
from typing import Any

from hwaac.lab import frr
from hwaac.lab.api import Lab
from hwaac.lab.errors import LabError
from hwaac.lab.manifest import locked, write_state
from hwaac.lab.netns import batch
from hwaac.lab.procs import alive, ident, run, stop

Log = Callable[[str], None]
MAX_FLAP_CYCLES = 1000
DOWN_MODES = ("down", "flap", "node")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def resolve_link(lab: Lab, target: str) -> str:
    """The cable id for ``CABLE_ID`` or ``DEVICE:PORT``.

    Raises:
        LabError: no such cable in the lab (naming the forms that are valid).
    """
    links = lab.state.get("links", {})
    if target in links:
        return target
    dev, sep, port = target.partition(":")
    if sep:
        for cid, link in links.items():
            if [dev, port] in (link["a"], link["b"]):
                return cid
    example = next(iter(links), "L0000000")
    raise LabError(
        f"link {target!r} is not a cable of lab {lab.name}: give a cable id (e.g. {example}) or "
        f"DEVICE:PORT of one of its ends"
    )


def _ends(lab: Lab, cid: str) -> list[list[str]]:
    link = lab.state["links"][cid]
    return [list(link["a"]), list(link["b"])]


def _held_down(faults: Iterable[dict[str, Any]], skip: str) -> set[tuple[str, str]]:
    return {tuple(e) for f in faults if f["id"] != skip and f.get("mode") in DOWN_MODES for e in f.get("ends", [])}


def _set_links(lab: Lab, ends: Iterable[list[str]], state: str) -> None:
    by_ns: dict[str, list[str]] = {}
    for dev, port in ends:
        by_ns.setdefault(lab.netns(dev), []).append(f"link set dev {port} {state}")
    for ns, lines in by_ns.items():
        batch(lines, netns=ns)


def _record(lab: Lab, fault: dict[str, Any]) -> None:
    faults = [f for f in lab.state.get("faults", []) if f["id"] != fault["id"]]
    lab.state["faults"] = [*faults, fault]
    write_state(lab.folder, lab.state)


def fail_link(
    lab: Lab,
    target: str,
    *,
    mode: str = "down",
    loss: float | None = None,
    delay: float | None = None,
    period: float = 2.0,
    cycles: int = 10,
    log: Log = lambda _: None,
) -> dict[str, Any]:
    """Fail one cable: ``mode`` "down", "netem" (``loss`` % and/or ``delay`` ms) or "flap" (down ``period`` s,
    up ``period`` s, ``cycles`` times).

    Raises:
        LabError: unknown cable, or a value out of range.
    """
    cid = resolve_link(lab, target)
    ends = _ends(lab, cid)
    with locked(lab.folder):
        lab.reload()
        if mode == "down":
            fault: dict[str, Any] = {"id": f"link:{cid}", "kind": "link", "target": cid, "mode": "down", "ends": ends}
            _set_links(lab, ends, "down")
        elif mode == "netem":
            if loss is None and delay is None:
                raise LabError("netem: give --loss PCT and/or --delay MS")
            if loss is not None and not 0 <= loss <= 100:
                raise LabError(f"--loss {loss}: not valid: a percentage 0..100")
            if delay is not None and not 0 <= delay <= 60000:
                raise LabError(f"--delay {delay}: not valid: milliseconds 0..60000")
            spec = (["loss", f"{loss:g}%"] if loss is not None else []) + (
                ["delay", f"{delay:g}ms"] if delay is not None else []
            )
            fault = {
                "id": f"netem:{cid}",
                "kind": "link",
                "target": cid,
                "mode": "netem",
                "ends": ends,
                "netem": " ".join(spec),
            }
            try:
                _netem(lab, ends, spec)
            except NoNetem:
                if delay is not None or loss is None:
                    raise
                _nft_loss(lab, ends, loss)
                del fault["netem"]
                fault.update(id=f"drop:{cid}", mode="drop", drop=f"{loss:g}%")
        elif mode == "flap":
            if not 0.1 <= period <= 600 or not 1 <= cycles <= MAX_FLAP_CYCLES:
                raise LabError(f"--flap: period {period} s, cycles {cycles}: valid: 0.1..600 s, 1..{MAX_FLAP_CYCLES}")
            old = next((f for f in lab.state.get("faults", []) if f["id"] == f"link:{cid}"), None)
            if old and old.get("process"):
                stop([old["process"]])
            fault = {
                "id": f"link:{cid}",
                "kind": "link",
                "target": cid,
                "mode": "flap",
                "ends": ends,
                "period": period,
                "cycles": cycles,
                "process": _start_flap(lab, ends, period, cycles),
            }
        else:
            raise LabError(f"link fault mode {mode!r} is not valid: down, netem, flap")
        fault["since"] = _now()
        _record(lab, fault)
    log(f"lab {lab.name}: {fault['id']} {fault['mode']} ({' - '.join(':'.join(e) for e in ends)})")
    return fault


class NoNetem(LabError):
    """The kernel has no netem qdisc."""


def _nft_table(port: str) -> str:
    return "hwaac_drop_" + re.sub(r"[^A-Za-z0-9_]", "_", port)


def _nft_loss(lab: Lab, ends: list[list[str]], loss: float) -> None:
    """Drop ``loss`` % (in steps of 0.01 %) of what each end receives: an nftables ``netdev`` table per end whose
    ingress chain drops at random, so each direction of the cable loses that share, as netem at both egresses
    would. On a failure the ends already done are undone."""
    done: list[list[str]] = []
    for dev, port in ends:
        rules = (
            f"table netdev {_nft_table(port)} {{\n  chain ingress {{\n"
            f"    type filter hook ingress device {json.dumps(port)} priority -500;\n"
            f"    numgen random mod 10000 < {round(loss * 100)} counter drop\n  }}\n}}\n"
        )
        proc = run(["ip", "netns", "exec", lab.netns(dev), "nft", "-f", "-"], input=rules, check=False)
        if proc.returncode != 0:
            _nft_undo(lab, done)
            raise LabError(
                f"nftables drop on {dev}:{port} failed: {(proc.stderr or proc.stdout).strip()[:300]} "
                "(--loss needs netem or nftables: scripts/install-system-deps.sh)"
            )
        done.append([dev, port])


def _nft_undo(lab: Lab, ends: Iterable[list[str]]) -> None:
    for dev, port in ends:
        run(["ip", "netns", "exec", lab.netns(dev), "nft", "delete", "table", "netdev", _nft_table(port)], check=False)


def _netem(lab: Lab, ends: list[list[str]], spec: list[str]) -> None:
    """``tc qdisc replace ... root netem SPEC`` at both ends; on a failure the ends already done are undone."""
    done: list[list[str]] = []
    for dev, port in ends:
        proc = run(["tc", "-n", lab.netns(dev), "qdisc", "replace", "dev", port, "root", "netem", *spec], check=False)
        if proc.returncode != 0:
            for d, p in done:
                run(["tc", "-n", lab.netns(d), "qdisc", "del", "dev", p, "root"], check=False)
            msg = (proc.stderr or proc.stdout).strip()
            if "qdisc kind is unknown" in msg:
                raise NoNetem(
                    "this kernel has no netem qdisc (CONFIG_NET_SCH_NETEM, module sch_netem): "
                    "--delay needs it (--loss alone falls back to nftables); link down and flap work "
                    "without it"
                )
            raise LabError(f"tc netem on {dev}:{port} failed: {msg}")
        done.append([dev, port])


def _start_flap(lab: Lab, ends: list[list[str]], period: float, cycles: int) -> dict[str, int]:
    """The flap loop: ``cycles`` times both ends down, ``period`` s, both up, ``period`` s; it ends up."""

    def cmds(state: str) -> str:
        return "; ".join(f"ip -n {shlex.quote(lab.netns(d))} link set dev {shlex.quote(p)} {state}" for d, p in ends)

    script = (
        f"i=0; while [ $i -lt {cycles} ]; do {cmds('down')}; sleep {period:g}; {cmds('up')}; "
        f"sleep {period:g}; i=$((i+1)); done"
    )
    proc = subprocess.Popen(
        ["sh", "-c", script],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    rec = ident(proc.pid)
    rec["group"] = 1
    return rec


def _require_member(lab: Lab, name: str, members: Collection[str], kind: str, plural: str) -> None:
    """Raise LabError unless ``name`` is one of ``members`` (the lab's switches or hosts), naming an example."""
    if name not in members:
        raise LabError(
            f"{name!r} is not a {kind} of lab {lab.name} ({len(members)} {plural}, e.g. {next(iter(members), '?')})"
        )


def fail_switch(lab: Lab, switch: str, *, log: Log = lambda _: None) -> dict[str, Any]:
    """Stop a switch's bgpd and zebra.

    Raises:
        LabError: not a switch of the lab.
    """
    _require_member(lab, switch, lab.switches, "switch", "switches")
    with locked(lab.folder):
        lab.reload()
        daemons = lab.state["daemons"].get(switch, {})
        stop([daemons[d] for d in ("bgpd", "zebra") if d in daemons])
        fault = {
            "id": f"switch:{switch}",
            "kind": "switch",
            "target": switch,
            "device": switch,
            "mode": "stopped",
            "since": _now(),
        }
        _record(lab, fault)
    log(f"lab {lab.name}: switch {switch}: bgpd and zebra stopped")
    return fault


def fail_node(lab: Lab, node: str, *, log: Log = lambda _: None) -> dict[str, Any]:
    """Take every link of a node down (both ends).

    Raises:
        LabError: not a host of the lab.
    """
    _require_member(lab, node, lab.hosts, "node", "nodes")
    ends = [
        e for cid, link in lab.state["links"].items() if node in (link["a"][0], link["b"][0]) for e in _ends(lab, cid)
    ]
    with locked(lab.folder):
        lab.reload()
        _set_links(lab, ends, "down")
        fault = {
            "id": f"node:{node}",
            "kind": "node",
            "target": node,
            "device": node,
            "mode": "node",
            "ends": ends,
            "since": _now(),
        }
        _record(lab, fault)
    log(f"lab {lab.name}: node {node}: {len(ends) // 2} links down")
    return fault


def matching(lab: Lab, target: str | None) -> list[dict[str, Any]]:
    """The recorded faults ``target`` names (all when None): a fault id, cable id, DEVICE:PORT or device name."""
    faults = list(lab.state.get("faults", []))
    if target is None:
        return faults
    cid = None
    with contextlib.suppress(LabError):
        cid = resolve_link(lab, target)
    return [f for f in faults if target in (f["id"], f.get("target"), f.get("device")) or (cid and f["target"] == cid)]


def restore(lab: Lab, target: str | None = None, *, log: Log = lambda _: None) -> list[str]:
    """Undo the faults ``target`` names (all when None); the ids undone.

    Raises:
        LabError: ``target`` names no recorded fault.
    """
    with locked(lab.folder):
        lab.reload()
        todo = matching(lab, target)
        if target is not None and not todo:
            ids = ", ".join(f["id"] for f in lab.state.get("faults", [])) or "none"
            raise LabError(f"lab {lab.name}: no fault on {target!r} (faults: {ids})")
        done: list[str] = []
        for fault in todo:
            _undo(lab, fault)
            lab.state["faults"] = [f for f in lab.state["faults"] if f["id"] != fault["id"]]
            write_state(lab.folder, lab.state)
            done.append(fault["id"])
            log(f"lab {lab.name}: {fault['id']} restored")
        return done


def _undo(lab: Lab, fault: dict[str, Any]) -> None:
    if fault.get("process"):
        stop([fault["process"]], timeout=2.0)
    if fault["mode"] in DOWN_MODES:
        held = _held_down(lab.state.get("faults", []), fault["id"])
        _set_links(lab, [e for e in fault["ends"] if tuple(e) not in held], "up")
    elif fault["mode"] == "netem":
        for dev, port in fault["ends"]:
            run(["tc", "-n", lab.netns(dev), "qdisc", "del", "dev", port, "root"], check=False)
    elif fault["mode"] == "drop":
        _nft_undo(lab, fault["ends"])
    elif fault["mode"] == "stopped":
        dev = fault["device"]
        daemons = lab.state["daemons"].setdefault(dev, {})
        if not all(alive(daemons.get(d)) for d in frr.DAEMONS):
            stop([daemons[d] for d in frr.DAEMONS if d in daemons])
            daemons.update(frr.start(lab.layout, dev, lab.netns(dev)))
