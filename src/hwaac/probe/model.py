"""The prober's shapes: a :class:`Flow` (one UDP 5-tuple on one rail), its :class:`FlowResult`, and the results
document of one host's sweep (``hwaac-probe/1``, JSON) with its writer and its one reader, :func:`read_results`,
which never raises: what it cannot read is a reason in ``ProbeResults.unknown``."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hwaac.fileio import write_atomic

FORMAT = "hwaac-probe/1"
MISSING_HOP = "*"  # a hop that did not answer (traceroute's mark)
NO_RESPONDER = "no responder on"  # how a flow's error starts when the destination's port was closed (ICMP)


@dataclass(frozen=True, slots=True)
class Flow:
    """One probed flow: from ``src_ip`` (the rail port ``src_if`` of ``src_host``) and UDP ``sport`` to ``dst_ip``
    (a port of ``dst_host`` on the same rail) and UDP ``dport``. With L4 ECMP hashing each source port is a path."""

    src_host: str
    src_if: str
    src_ip: str
    dst_host: str
    dst_ip: str
    rail: int
    sport: int
    dport: int

    @property
    def key(self) -> str:
        """``SRC:SPORT>DST:DPORT``, the flow's name in the path cache and in messages."""
        return f"{self.src_ip}:{self.sport}>{self.dst_ip}:{self.dport}"


@dataclass(frozen=True, slots=True)
class RttStats:
    """Round-trip times of the replies, microseconds."""

    min: float
    p50: float
    p99: float


@dataclass(slots=True)
class FlowResult:
    """What one flow measured.

    Attributes:
        flow: the flow.
        sent: loss probes sent.
        received_forward: probes the responder counted (it puts its count into each reply and answers count
            queries at the end); None when nothing came back, so the forward direction is unknown.
        received_back: replies received (the round trip).
        rtt_us: reply round-trip times, None without a reply.
        path: the forward hops as learned (IPv4 text, ``*`` for a hop that did not answer; the last is the
            destination when it was reached), None when not learned.
        path_complete: the destination was reached and every hop answered.
        host_drops: datagrams a receive buffer on a host dropped while the flow ran (the responder's socket,
            counted by the kernel, SO_RXQ_OVFL): loss that is no evidence against the network.
        errors: what went wrong, in words.
    """

    flow: Flow
    sent: int = 0
    received_forward: int | None = None
    received_back: int = 0
    rtt_us: RttStats | None = None
    path: tuple[str, ...] | None = None
    path_complete: bool = False
    host_drops: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def forward_lost(self) -> int | None:
        """Probes lost on the way to the responder, None when its count never came back."""
        if self.received_forward is None:
            return None
        return max(0, self.sent - self.received_forward)

    @property
    def dark(self) -> bool:
        """Probes were sent and nothing at all came back (neither a reply nor a count)."""
        return self.sent > 0 and self.received_back == 0 and not self.received_forward


@dataclass(slots=True)
class ProbeResults:
    """One host's sweep of probes: ``host`` sent them between ``started`` and ``ended`` (Unix seconds); ``unknown``
    holds what a reader could not read (a whole document, or single flows that were left out)."""

    host: str
    started: float | None
    ended: float | None
    flows: list[FlowResult] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


def flow_dict(f: Flow) -> dict[str, Any]:
    return {
        "src_host": f.src_host,
        "src_if": f.src_if,
        "src_ip": f.src_ip,
        "dst_host": f.dst_host,
        "dst_ip": f.dst_ip,
        "rail": f.rail,
        "sport": f.sport,
        "dport": f.dport,
    }


def result_dict(r: FlowResult) -> dict[str, Any]:
    """One flow result as the document holds it."""
    rtt = None if r.rtt_us is None else {"min": r.rtt_us.min, "p50": r.rtt_us.p50, "p99": r.rtt_us.p99}
    return {
        "flow": flow_dict(r.flow),
        "sent": r.sent,
        "received_forward": r.received_forward,
        "received_back": r.received_back,
        "rtt_us": rtt,
        "path": None if r.path is None else list(r.path),
        "path_complete": r.path_complete,
        "host_drops": r.host_drops,
        "errors": list(r.errors),
    }


def results_document(results: ProbeResults) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "host": results.host,
        "started": results.started,
        "ended": results.ended,
        "flows": [result_dict(r) for r in results.flows],
    }


def write_results(path: str | Path, results: ProbeResults) -> None:
    """Write the document atomically (:func:`hwaac.fileio.write_atomic`): a reader (a timer's next sweep,
    Ansible's read of the latest results) sees the old file or the new one, never a part. Raises OSError."""
    write_atomic(path, json.dumps(results_document(results), indent=1) + "\n")


class _Bad(ValueError):
    pass


def _int(d: Mapping[str, Any], key: str) -> int:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise _Bad(f"{key} is {v!r}, not a count")
    return v


def _int_or_none(d: Mapping[str, Any], key: str) -> int | None:
    return None if d.get(key) is None else _int(d, key)


def _str(d: Mapping[str, Any], key: str) -> str:
    v = d.get(key)
    if not isinstance(v, str) or not v:
        raise _Bad(f"{key} is {v!r}, not a name")
    return v


def _time(v: Any, key: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise _Bad(f"{key} is {v!r}, not Unix seconds")
    return float(v)


def _flow(raw: Any) -> FlowResult:
    if not isinstance(raw, dict):
        raise _Bad(f"not an object but {type(raw).__name__}")
    f = raw.get("flow")
    if not isinstance(f, dict):
        raise _Bad("no flow object")
    rail, sport, dport = (_int(f, k) for k in ("rail", "sport", "dport"))
    if sport > 65535 or dport > 65535:
        raise _Bad(f"ports {[sport, dport]} are not UDP ports")
    flow = Flow(
        _str(f, "src_host"),
        _str(f, "src_if"),
        _str(f, "src_ip"),
        _str(f, "dst_host"),
        _str(f, "dst_ip"),
        rail,
        sport,
        dport,
    )
    sent = _int(raw, "sent")
    fwd = _int_or_none(raw, "received_forward")
    back = _int(raw, "received_back")
    errors = raw.get("errors", [])
    if not isinstance(errors, list) or not all(isinstance(e, str) for e in errors):
        raise _Bad("errors is not a list of texts")
    errors = list(errors)
    if fwd is not None and fwd > sent:
        errors.append(f"the responder counted {fwd} probes of {sent} sent: count not trusted")
        fwd = None
    rtt = raw.get("rtt_us")
    stats = None
    if rtt is not None:
        if not isinstance(rtt, dict):
            raise _Bad("rtt_us is not an object")
        vals = [rtt.get(k) for k in ("min", "p50", "p99")]
        if not all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v >= 0 for v in vals
        ):
            raise _Bad(f"rtt_us {rtt!r} is not three times")
        stats = RttStats(*(float(v) for v in vals))  # type: ignore[arg-type]
    path = raw.get("path")
    if path is not None:
        if not isinstance(path, list) or not all(isinstance(h, str) and h for h in path):
            raise _Bad("path is not a list of hop addresses")
        path = tuple(path)
    complete = raw.get("path_complete", False)
    if not isinstance(complete, bool):
        raise _Bad("path_complete is not true or false")
    drops = _int_or_none(raw, "host_drops") or 0
    return FlowResult(flow, sent, fwd, back, stats, path, complete and path is not None, drops, errors)


def read_results(text: str | bytes, *, where: str = "probe results") -> ProbeResults:
    """Read a results document. Never raises: a document that does not read is ``ProbeResults`` with no flows
    and the reason in ``unknown``; a flow that does not read is left out with its reason."""
    empty = ProbeResults("", None, None)
    try:
        doc = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        empty.unknown.append(f"{where}: not JSON (cut or damaged?): {exc}")
        return empty
    if not isinstance(doc, dict):
        empty.unknown.append(f"{where}: a JSON {type(doc).__name__}, not a results object")
        return empty
    if doc.get("format") != FORMAT:
        empty.unknown.append(f"{where}: format {doc.get('format')!r}, not {FORMAT!r}")
        return empty
    try:
        out = ProbeResults(_str(doc, "host"), _time(doc.get("started"), "started"), _time(doc.get("ended"), "ended"))
    except _Bad as exc:
        empty.unknown.append(f"{where}: {exc}")
        return empty
    flows = doc.get("flows")
    if not isinstance(flows, list):
        out.unknown.append(f"{where}: flows is not a list")
        return out
    for n, raw in enumerate(flows):
        try:
            out.flows.append(_flow(raw))
        except _Bad as exc:
            out.unknown.append(f"{where}: flow {n}: {exc}")
    return out


def recent(doc: ProbeResults, read_at: float, max_age: float, *, where: str = "probe results") -> ProbeResults:
    """``doc`` when its run ended at most ``max_age`` seconds before ``read_at`` (both the node's clock); else the
    same host with no flows and the reason: results an agent left behind when it stopped measure the fabric as it
    was then, not now. A document that did not read stays as it is; one with no time has an unknown age."""
    if doc.unknown and not doc.flows:
        return doc
    end = doc.ended if doc.ended is not None else doc.started
    if end is None:
        why = "no start or end time: its age is unknown"
    elif read_at - end > max_age:
        why = (
            f"its run ended {read_at - end:.0f} s before it was read, more than {max_age:g} s: the agent has "
            "not written newer results (is its timer running?)"
        )
    else:
        return doc
    return ProbeResults(doc.host, None, None, [], [*doc.unknown, f"{where}: not judged, {why}"])


def merge(results: Sequence[ProbeResults]) -> list[FlowResult]:
    """Every flow of several hosts' documents, in host order."""
    return [r for doc in sorted(results, key=lambda d: d.host) for r in doc.flows]


__all__ = [
    "FORMAT",
    "MISSING_HOP",
    "NO_RESPONDER",
    "Flow",
    "FlowResult",
    "ProbeResults",
    "RttStats",
    "flow_dict",
    "merge",
    "read_results",
    "recent",
    "result_dict",
    "results_document",
    "write_results",
]
