"""Rail pre-flight of a GPU node: are the RDMA ports NCCL will take there, and the plan's rails among them, usable?

The ports NCCL takes are those its ``NCCL_IB_HCA`` value selects (:func:`hwaac.health.nccl_hca.nccl_ib_ports`, by
NCCL's own matching, whatever the form: the rendered exact list, a prefix, an exclude list). Each must be up, as
:func:`hwaac.health.checks_nic.check_ibstat_ports` judges a port (Active and LinkUp), and each entry of an include list
must name a port that is there. A rail of the plan is the node's NIC port cabled to a leaf (``plan_rails``) with
its RDMA device (the rendered ``nic-roce.json``) and port 1 (what hwaac renders into ``NCCL_IB_HCA``); a rail the
value leaves out is not checked, and said so. A rail that is not usable is named with its address and the leaf port
it is cabled to, so that the operator knows which cable or switch port to look at.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hwaac.health.checks_nic import check_ibstat_ports
from hwaac.health.nccl_hca import entry_matches, nccl_ib_ports, nccl_selects
from hwaac.health.parsers.ibstat import IbstatResult
from hwaac.health.result import Finding, Status

RAIL_PORT = 1
"""The HCA port of a rail: hwaac renders ``NCCL_IB_HCA`` as ``=<hca>:1,...`` (:mod:`hwaac.render.host.nccl`)."""

_SHOWN_UNKNOWN = 3  # ibstat's unreadable parts named in the message before "..."


class RailCheckError(ValueError):
    """The plan's rails and the rendered NIC ports do not agree (a plan folder rendered from another plan)."""


def _entry(entry: Mapping[str, Any]) -> str:
    """An entry as NCCL_IB_HCA writes it: ``device[:port]``."""
    return entry["device"] + (f":{entry['port']}" if entry["port"] is not None else "")


def _finding(f: Finding) -> dict[str, Any]:
    return {
        "code": f.code,
        "status": str(f.status),
        "message": f.message,
        "subject": f.subject,
        "action": f.action.value,
    }


def check_rails(
    ib: IbstatResult,
    spec: Mapping[str, Any],
    rails: Sequence[Mapping[str, Any]],
    nic_ports: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """Judge the ports NCCL takes on a node and name its unusable rails.

    Args:
        ib: the node's ``ibstat``, read (stdout and stderr, so that an ``ibpanic`` is seen).
        spec: its ``NCCL_IB_HCA`` as :func:`hwaac.plan.lookup.parse_ib_hca` reads it.
        rails: its rail ports as :func:`hwaac.plan.lookup.node_rails` gives them (``interface``, ``address``,
            ``prefixlen``, ``leaf``, ``leaf_port``...).
        nic_ports: its rendered NIC ports (``hosts/<node>/nic-roce.json``: ``interface``, ``hca``).

    Returns:
        ``{"status", "msg", "value", "rails", "left_out", "other_ports", "findings"}``: ``status`` PASS, FAIL (a
        port NCCL takes is not up, a device or port it names is not there, or it takes no rail) or UNKNOWN (ibstat
        was not read completely: a rail could not be judged); ``msg`` one line that says which and names each
        unusable rail with its address and leaf port; ``rails`` the rails NCCL takes, each with ``hca`` and
        ``problem`` (None when usable) and ``status``; ``left_out`` the rails the value leaves out; ``other_ports``
        the ports it takes or names that are no rail's (``{"device", "port", "problem", "status"}``, port None for
        an entry that names none); ``findings`` those of
        :func:`~hwaac.health.checks_nic.check_ibstat_ports` over the ports NCCL takes.

    Raises:
        RailCheckError: a rail with no rendered NIC port, or one without an RDMA device.
    """
    hca_of = {p.get("interface"): p.get("hca") for p in nic_ports}
    unmatched = [r["interface"] for r in rails if not hca_of.get(r["interface"])]
    if unmatched:
        raise RailCheckError(
            f"rail port(s) {', '.join(unmatched)} of plan.json have no RDMA device in the rendered "
            "nic-roce.json: re-render the plan folder"
        )
    taken = nccl_ib_ports(spec, ib)
    chosen = [(p["device"], p["port"]) for p in taken["ports"]]
    findings = check_ibstat_ports(ib, ports=chosen)
    down = {f.subject: f.status for f in findings if f.code == "NIC_PORT_DOWN"}  # UNKNOWN when ibstat was torn
    read = {(p.ca, p.number): p for p in ib.ports()}
    # a port ibstat did not list: absent (FAIL), or not read when ibstat stopped early at some device (UNKNOWN)
    stopped = ib.panic is not None
    absent = (
        (f"not read, ibstat stopped at {ib.failed_device or 'a device'}", Status.UNKNOWN)
        if stopped
        else ("missing", Status.FAIL)
    )

    def judged(device: str, port: int | None) -> dict[str, Any]:
        p = read.get((device, port)) if port is not None else None
        if p is None:
            text, status = absent
        elif p.subject in down:
            text, status = f"{p.state}/{p.physical_state}", down[p.subject]
        elif p.state is None or p.physical_state is None:  # a field ibstat printed that could not be read
            text, status = "state not read", Status.UNKNOWN
        else:
            text, status = None, Status.PASS
        return {"problem": text, "status": str(status)}

    def hca_for(rail: Mapping[str, Any]) -> str:
        hca = hca_of[rail["interface"]]
        assert hca  # a rail without an RDMA device was refused above
        return hca

    used: list[dict[str, Any]] = []
    left_out: list[dict[str, Any]] = []
    for r in rails:
        hca = hca_for(r)
        if nccl_selects(spec, hca, RAIL_PORT):
            used.append({**r, "hca": hca, **judged(hca, RAIL_PORT)})
        else:
            left_out.append({**r, "hca": hca})
    rail_ports = {(hca_for(r), RAIL_PORT) for r in rails}
    others = [{"device": d, "port": n, **judged(d, n)} for d, n in chosen if (d, n) not in rail_ports]
    exact = bool(spec["exact"])
    for m in taken["missing"]:  # an entry naming an absent rail's device is said with that rail
        if not any(entry_matches(m, d, n, exact) for d, n in rail_ports):
            others.append({"device": m["device"], "port": m["port"], **judged(m["device"], None)})
    return _report(spec.get("value", ""), used, left_out, others, findings)


def _rail(r: Mapping[str, Any]) -> str:
    return f"{r['interface']} ({r['hca']})"


def _port(o: Mapping[str, Any]) -> str:
    return o["device"] + ("" if o["port"] is None else f" port {o['port']}")


def _report(
    value: str,
    used: list[dict[str, Any]],
    left_out: list[dict[str, Any]],
    others: list[dict[str, Any]],
    findings: list[Finding],
) -> dict[str, Any]:
    """The verdict and its one-line message (see :func:`check_rails`)."""
    bad_rails = [r for r in used if r["problem"]]
    bad_others = [o for o in others if o["problem"]]
    unread = [f for f in findings if f.status == Status.UNKNOWN]
    items = [
        f"{r['interface']} ({r['hca']}, {r['problem']}, {r['address']}/{r['prefixlen']}) -> {r['leaf']} "
        f"{r['leaf_port']}"
        for r in bad_rails
    ]
    items += [f"{_port(o)} ({o['problem']}, not a rail of the plan)" for o in bad_others]
    parts: list[str] = []
    if not used:
        parts.append(
            f"NCCL_IB_HCA={value} takes none of the node's {len(left_out)} rails ({', '.join(map(_rail, left_out))})"
        )
    if items:
        counts = [f"{len(bad_rails)} of {len(used)} rails"] if bad_rails else []
        counts += [f"{len(bad_others)} other port{'s' if len(bad_others) > 1 else ''}"] if bad_others else []
        parts.append(f"{' and '.join(counts)} not usable: {'; '.join(items)}")
    elif used:
        parts.append(f"{len(used)} rails Active: {', '.join(r['hca'] for r in used)}")
    if left_out and used:
        parts.append(f"NCCL_IB_HCA={value} leaves out {', '.join(map(_rail, left_out))}")
    also = [_port(o) for o in others if not o["problem"]]
    if also:
        parts.append(f"NCCL also takes {', '.join(also)} (not a rail of the plan)")
    if unread:
        shown = [f.message for f in unread[:_SHOWN_UNKNOWN]] + (["..."] if len(unread) > _SHOWN_UNKNOWN else [])
        parts.append(f"ibstat was not read completely: {'; '.join(shown)}")
    worst = max((Status[x["status"]] for x in (*bad_rails, *bad_others)), default=Status.PASS)
    status = Status.FAIL if not used else max(worst, Status.UNKNOWN if unread else Status.PASS)
    msg = "; ".join(parts)
    return {
        "status": str(status),
        "msg": msg,
        "value": value,
        "rails": used,
        "left_out": left_out,
        "other_ports": others,
        "findings": [_finding(f) for f in findings],
    }
