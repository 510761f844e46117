"""Columns of FRR's ``show bgp ... summary json`` for network health: :func:`read_bgp_summary_frame` reads a
summary's peers straight into a :class:`~hwaac.telemetry.frames.Frame`, the fast path beside
:func:`hwaac.telemetry.parsers.frr_bgp.parse_bgp_summary`, which reads everything else and says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import repeat
from typing import TYPE_CHECKING, Any

from hwaac.telemetry.model import all_known
from hwaac.telemetry.parsers import json_text
from hwaac.telemetry.parsers.frr_bgp import (
    DEFAULT_VRF,
    ESTABLISHED,
    FAMILY_PREFIXES,
    TOOL,
    BgpSummary,
    asn_field,
    int_field,
    is_family,
    str_field,
    where_in_vrf,
)

if TYPE_CHECKING:
    from hwaac.telemetry.frames import Frame

COUNTERS = ("bgp_established", "bgp_dropped")  # BgpSummary.snapshot's counters, in its order
_NONE = type(None)
_INT, _INT_OR_NONE, _STR, _NONE_ONLY = {int}, {int, _NONE}, {str}, {_NONE}
_OPTIONAL_INTS = ("pfxSnt", "msgRcvd", "msgSent")  # frr_bgp's peer counters read for the reasons only
_AS_TEXT: dict[int | None, str] = {None: ""}  # remote AS -> its state word


def _families(doc: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], str]] | None:
    """(family name, family, VRF hint) of each family the parser reads, in its order; None where it gives a
    reason."""
    if is_family(doc):
        return [("", doc, "")]
    out: list[tuple[str, Mapping[str, Any], str]] = []
    for key, value in doc.items():
        if is_family(value):
            out.append((key, value, "") if key.startswith(FAMILY_PREFIXES) else ("", value, key))
        elif isinstance(value, Mapping):  # show bgp vrf all summary json: VRF -> families
            for name, fam in value.items():
                if is_family(fam):
                    out.append((name, fam, key) if name.startswith(FAMILY_PREFIXES) else ("", fam, name))
                elif not isinstance(fam, Mapping) or fam:
                    return None
        else:
            return None
    if not out and not all(isinstance(v, Mapping) and not v for v in doc.values()):
        return None
    return out


def _column(peers: list[dict[str, Any]], key: str) -> list[Any]:
    return list(map(dict.get, peers, repeat(key)))


def _kinds(peers: list[dict[str, Any]], key: str) -> set[type]:
    """The types of ``key``'s values among ``peers`` (NoneType where it is absent)."""
    return set(map(type, map(dict.get, peers, repeat(key))))


def _peer_columns(
    out: BgpSummary, peers: list[dict[str, Any]], names: list[str], where: str
) -> tuple[list[str], list[str], list[str], list[str], list[int], list[int]] | None:
    """The state words (FSM state, peerState, hostname, remote AS) and the counters of a family's peers, column by
    column, as the parser reads each peer; None where it gives a reason (``out`` collects those of its helpers, which
    read any column that is not all integers)."""
    n = len(peers)
    states = _column(peers, "state")
    if set(map(type, states)) != _STR or "" in states:
        return None
    if " (" in "\n".join(states):  # an FSM state with its reason, "Idle (Admin)" (FRR before 8.0)
        fsm, why = zip(*((f, w.rstrip(")")) for f, _, w in (s.partition(" (") for s in states)), strict=True)
        states, whys = list(fsm), list(why)
    else:
        whys = [""] * n
    marked = _column(peers, "peerState")
    kinds = set(map(type, marked))
    if kinds == _STR and "" not in marked:
        peer_states = marked
    elif kinds == _NONE_ONLY:
        peer_states = whys
    else:
        peer_states = [m if type(m) is str and m else w for m, w in zip(marked, whys, strict=True)]
    hosts = _column(peers, "hostname")
    kinds = set(map(type, hosts))
    if kinds == _NONE_ONLY:
        hosts = [""] * n
    elif kinds != _STR:
        hosts = [h if type(h) is str else "" for h in hosts]
    remote = _column(peers, "remoteAs")
    if set(map(type, remote)) != _INT:
        remote = [
            a if type(a) is int else asn_field(out, p, "remoteAs", f"{where} peer {k}", required=True)
            for a, p, k in zip(remote, peers, names, strict=True)
        ]
    cached = list(map(_AS_TEXT.get, remote))  # a fabric's few thousand AS numbers, each written once
    if all_known(cached):
        remote_as = cached
    else:
        for a in set(remote):
            if a not in _AS_TEXT and len(_AS_TEXT) < 65536:
                _AS_TEXT[a] = "" if not a else str(a)  # 0: not learnt yet, read as None
        remote_as = [_AS_TEXT[a] if a in _AS_TEXT else "" if not a else str(a) for a in remote]
    if not _kinds(peers, "localAs") <= _INT_OR_NONE:
        for p, k in zip(peers, names, strict=True):
            if type(p.get("localAs")) is not int:
                asn_field(out, p, "localAs", f"{where} peer {k}")
    up = [p for p in peers if p.get("peerUptime") != "never"] if "never" in _column(peers, "peerUptime") else peers
    kinds = _kinds(up, "peerUptimeMsec") | _kinds(up, "peerUptimeEstablishedEpoch")
    kinds.update(*(_kinds(peers, k) for k in _OPTIONAL_INTS))
    if all(map(dict.__contains__, peers, repeat("pfxRcd"))):
        kinds |= _kinds(peers, "pfxRcd")
    else:
        kinds.update(map(type, (p.get("pfxRcd" if "pfxRcd" in p else "prefixReceivedCount") for p in peers)))
    if not kinds <= _INT_OR_NONE:
        return None
    established, dropped = _column(peers, "connectionsEstablished"), _column(peers, "connectionsDropped")
    if set(map(type, established)) != _INT or set(map(type, dropped)) != _INT:
        return None
    return states, peer_states, hosts, remote_as, established, dropped


def _taken_at(peers: list[dict[str, Any]]) -> float | None:
    """The parser's time of the output: the first peer's with both uptime fields."""
    for p in peers:
        msec, epoch = p.get("peerUptimeMsec"), p.get("peerUptimeEstablishedEpoch")
        if p.get("peerUptime") != "never" and type(msec) is int and type(epoch) is int:
            return epoch + msec / 1000
    return None


def read_bgp_summary_frame(raw: str | bytes, *, device: str = "", version: str | None = None) -> Frame | None:
    """:meth:`BgpSummary.snapshot` of :func:`~hwaac.telemetry.parsers.frr_bgp.parse_bgp_summary`'s reading of
    ``raw`` as a :class:`~hwaac.telemetry.frames.Frame` (peers as ports; counters :data:`COUNTERS`; the state
    words), when ``raw`` is one JSON document that it reads with no reason and every peer's counters are integers
    from 0 to 2**64 - 1; None for anything else, which the parser reads and says why. ``raw`` may be the file's
    bytes (UTF-8), decoded faster than its text. Never raises."""
    import numpy as np  # here: the parser's other callers (apply, verify, lab) need no numpy

    from hwaac.telemetry.frames import Frame

    try:
        doc = json_text.loads_frame(raw)
    except (ValueError, RecursionError):
        return None
    families = _families(doc) if isinstance(doc, Mapping) else None
    if families is None:
        return None
    out = BgpSummary()  # collects the reasons of the parser's own helpers
    at: dict[str, int] = {}  # peer key -> its row
    states: list[dict[str, str]] = []
    established: list[int] = []
    dropped: list[int] = []
    taken_at: float | None = None
    for name, fam, hint in families:
        vrf = str_field(fam.get("vrfName")) or hint or DEFAULT_VRF
        where = where_in_vrf(vrf, name or "family")
        peers = fam.get("peers", {})
        if not isinstance(peers, Mapping):
            return None
        asn_field(out, fam, "as", where)
        int_field(out, fam, "tableVersion", where)
        docs = list(peers.values())
        if not docs:
            continue
        if set(map(type, docs)) != {dict}:
            return None
        names = list(peers)
        columns = _peer_columns(out, docs, names, where)
        if columns is None or out.unknown:
            return None
        if taken_at is None:
            taken_at = _taken_at(docs)
        fsm, peer_state, hosts, remote_as, est, drop = columns
        keys = names if vrf == DEFAULT_VRF else [f"{vrf}/{n}" for n in names]
        if at.keys().isdisjoint(keys):  # the usual: every peer in one family
            at.update(zip(keys, range(len(states), len(states) + len(keys)), strict=True))
            rows = list(zip(fsm, peer_state, hosts, remote_as, strict=True))
            # one dict for the peers of the same words (a switch's peers share a few): read only, as frames are
            shared = {
                row: {"bgp_state": a, "peer_state": b, "vrf": vrf, "hostname": c, "remote_as": d}
                for row in set(rows)
                for a, b, c, d in (row,)
            }
            states += map(shared.__getitem__, rows)
            established += est
            dropped += drop
            continue
        for i, key in enumerate(keys):
            row = at.get(key)
            if row is None:
                at[key] = len(states)
                states.append(
                    {
                        "bgp_state": fsm[i],
                        "peer_state": peer_state[i],
                        "vrf": vrf,
                        "hostname": hosts[i],
                        "remote_as": remote_as[i],
                    }
                )
                established.append(est[i])
                dropped.append(drop[i])
            elif states[row]["bgp_state"] == ESTABLISHED and fsm[i] != ESTABLISHED:  # merged: not Established wins
                states[row] = {**states[row], "bgp_state": fsm[i], "peer_state": peer_state[i]}  # shared: a copy
    values = np.empty((len(states), 2 if states else 0), dtype=np.uint64)
    try:
        if states:
            values[:, 0], values[:, 1] = established, dropped
    except OverflowError:  # below 0 or above 2**64 - 1
        return None
    return Frame(TOOL, device, taken_at, version or "", list(at), COUNTERS if states else (), values, states or None)


__all__ = ["COUNTERS", "read_bgp_summary_frame"]
