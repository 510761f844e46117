"""Reader of FRR's ``show bgp [vrf NAME|all] [ipv4|ipv6 [unicast]] summary json`` (also ``show ip bgp summary
json``): each BGP peer's session state and counters, as bgpd prints them (``bgpd/bgp_vty.c`` ``bgp_show_summary``).

The one place this format is read: :mod:`hwaac.verify.facts`, :mod:`hwaac.apply.bgp` and :mod:`hwaac.lab.status`
call it. Shapes, keys per FRR version and what is not read: ``docs/telemetry/frr.md``. :func:`read_bgp_summary_frame`
reads a summary's peers straight into columns (:class:`~hwaac.telemetry.frames.Frame`) for network health.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING, Any

from hwaac.telemetry.model import Snapshot
from hwaac.telemetry.parsers import json_text
from hwaac.telemetry.parsers.frr_json import documents

if TYPE_CHECKING:
    from hwaac.telemetry.frames import Frame

TOOL = "show bgp summary json"
ESTABLISHED = "Established"
DEFAULT_VRF = "default"
# the first word of every address-family key bgpd prints (bgp_vty.c get_afi_safi_json_str: ipv4Unicast, ipv6Vpn,
# l2VpnEvpn...); any other key of an object of families is a VRF (``show bgp vrf all ... summary json``)
_FAMILY_PREFIXES = ("ipv4", "ipv6", "l2Vpn")


@dataclass(slots=True)
class BgpPeer:
    """One neighbour, over every address family it is active in.

    Attributes:
        name: the neighbour as FRR keys it: its address, or the interface of an unnumbered peer.
        vrf: the VRF of its BGP instance.
        interface: the interface of an unnumbered peer (``idType`` "interface"), or of a link-local IPv6 peer
            (``scopeIfName``, FRR >= 10.7), else "".
        state: the FSM state without FRR's reason (``"Idle (Admin)"`` -> ``"Idle"``); None when not printed.
        peer_state: why a peer is down, FRR's ``peerState`` (FRR >= 8.0: OK, Admin, PfxCt, Passive, NSF passive,
            Policy), before 8.0 the reason in ``state`` ("Admin", "PfxCt"); "" when none is printed.
        remote_as / local_as: the AS numbers (asdot ``"1.10"`` read as 65546); remote_as None while a
            ``remote-as external|internal`` peer has not yet sent its OPEN (FRR prints 0).
        hostname: the peer's hostname from its hostname capability ("" when not advertised).
        desc: the configured ``neighbor ... description``.
        uptime_s: seconds since the session last came up or went down (``peerUptimeMsec``; FRR restarts the
            timer on both), None when it never changed (``"peerUptime": "never"``).
        established_epoch: ``peerUptimeEstablishedEpoch``, the Unix time of that change.
        prefixes_received / prefixes_sent: summed over the peer's families (``pfxRcd`` / ``pfxSnt``; before 7.3
            ``prefixReceivedCount``); None when a family does not print it (``pfxSnt`` of a peer that is not
            Established, before 7.6).
        connections_established / connections_dropped: sessions that reached Established / dropped from it
            since bgpd started (FRR >= 7.2). Monotonic: their rate is the session flap rate.
        msg_rcvd / msg_sent: BGP messages received and sent (monotonic).
        families: the address families it appears in (``ipv4Unicast``...; "" for a single family printed flat).
    """

    name: str
    vrf: str = DEFAULT_VRF
    interface: str = ""
    state: str | None = None
    peer_state: str = ""
    remote_as: int | None = None
    local_as: int | None = None
    hostname: str = ""
    desc: str = ""
    uptime_s: float | None = None
    established_epoch: int | None = None
    prefixes_received: int | None = None
    prefixes_sent: int | None = None
    connections_established: int | None = None
    connections_dropped: int | None = None
    msg_rcvd: int | None = None
    msg_sent: int | None = None
    families: tuple[str, ...] = ()

    @property
    def established(self) -> bool:
        return self.state == ESTABLISHED

    @property
    def label(self) -> str:
        """The state as FRR's text summary words it: with the reason while down (``"Idle (Admin)"``)."""
        state = self.state or ""
        if not self.established and self.peer_state not in ("", "OK"):
            return f"{state} ({self.peer_state})"
        return state


@dataclass(slots=True)
class BgpFamily:
    """One address family of one BGP instance, as its summary header prints it.

    Attributes:
        name: ``ipv4Unicast``, ``ipv6Unicast``, ``l2VpnEvpn``...; "" for ``show bgp ipv4 unicast summary json``,
            which prints the family's object without its key.
        vrf: the instance's VRF (``vrfName``).
        router_id / local_as: the instance's router id and AS.
        table_version: the BGP table version; it stops changing once the instance has converged.
        update_delay_in_progress: bgpd is still in its ``update-delay`` (read-only: no best path computed, nothing
            installed or sent; ``updateDelayInProgress``).
        peers: the keys of its peers in :attr:`BgpSummary.peers`.
    """

    name: str
    vrf: str = DEFAULT_VRF
    router_id: str = ""
    local_as: int | None = None
    table_version: int | None = None
    update_delay_in_progress: bool = False
    peers: tuple[str, ...] = ()


@dataclass(slots=True)
class BgpSummary:
    """The peers of one ``show bgp ... summary json``.

    Attributes:
        device / version: as the caller gave them.
        taken_at: when bgpd printed it, Unix time: a peer's ``peerUptimeEstablishedEpoch`` plus its
            ``peerUptimeMsec`` (bgpd computes the first as now minus the second), None when no peer has them.
        router_id / local_as: those of the first family of the default VRF (else of the first family).
        peers: by name (address or interface) for the default VRF, ``VRF/name`` for another VRF.
        families: by family name for the default VRF, ``VRF/family`` for another VRF.
        parsed: the output was FRR's JSON of this command (an empty ``{}`` included); False for other text.
        unknown: what could not be read, each naming the peer or field.
    """

    device: str = ""
    version: str = ""
    taken_at: float | None = None
    router_id: str = ""
    local_as: int | None = None
    peers: dict[str, BgpPeer] = field(default_factory=dict)
    families: dict[str, BgpFamily] = field(default_factory=dict)
    parsed: bool = False
    unknown: list[str] = field(default_factory=list)

    def established(self) -> list[str]:
        """The keys of the Established peers, sorted."""
        return sorted(k for k, p in self.peers.items() if p.established)

    def snapshot(self) -> Snapshot:
        """The counters for rates (``bgp_established``, ``bgp_dropped``: session flaps), one "port" per peer key
        of :attr:`peers`; the state words ``bgp_state``, ``peer_state``, ``remote_as``, ``hostname``, ``vrf``."""
        snap = Snapshot(TOOL, device=self.device, taken_at=self.taken_at, version=self.version,
                        unknown=list(self.unknown))
        for key, p in self.peers.items():
            sample = snap.port(key)
            sample.counters["bgp_established"] = p.connections_established
            sample.counters["bgp_dropped"] = p.connections_dropped
            sample.state.update(bgp_state=p.state or "", peer_state=p.peer_state, vrf=p.vrf, hostname=p.hostname,
                                remote_as="" if p.remote_as is None else str(p.remote_as))
        return snap


def parse_bgp_summary(raw: str | bytes | Mapping[str, Any], *, device: str = "",
                      version: str | None = None) -> BgpSummary:
    """Read ``show bgp ... summary json`` (the text, or the document already decoded). Never raises."""
    out = BgpSummary(device=device, version=version or "")
    docs, why = documents(raw)
    if why:
        out.unknown.append(why)
    for doc in docs:
        if not isinstance(doc, Mapping):
            out.unknown.append(f"top level is a JSON {type(doc).__name__}, not an object of address families")
            continue
        if _instance(out, doc, "", top=True) or all(isinstance(v, Mapping) and not v for v in doc.values()):
            out.parsed = True  # families read, or none to read ({} or VRFs without neighbours)
        else:
            out.unknown.append("no address family in the document: not a BGP summary")
    default = [f for f in out.families.values() if f.vrf == DEFAULT_VRF] or list(out.families.values())
    if default:
        out.router_id, out.local_as = default[0].router_id, default[0].local_as
    return out


def _is_family(obj: Any) -> bool:
    return isinstance(obj, Mapping) and ("peers" in obj or "routerId" in obj)


def _instance(out: BgpSummary, doc: Mapping[str, Any], vrf: str, *, top: bool) -> int:
    """An object of families (or one family printed flat, or, at the top, an object of VRFs); the number of
    families read."""
    if _is_family(doc):
        _family(out, "", doc, vrf)
        return 1
    read = 0
    for key, value in doc.items():
        if _is_family(value):
            if key.startswith(_FAMILY_PREFIXES):
                _family(out, key, value, vrf)
            else:  # show bgp vrf all ipv4 unicast summary json: VRF -> the family printed flat
                _family(out, "", value, key)
            read += 1
        elif isinstance(value, Mapping) and top:
            read += _instance(out, value, key, top=False)  # show bgp vrf all summary json: VRF -> families
        elif isinstance(value, Mapping) and not value:
            continue  # a family or VRF without neighbours
        else:
            out.unknown.append(f"{_where(vrf, key)}: not an address family ({_short(value)})")
    return read


def _family(out: BgpSummary, name: str, fam: Mapping[str, Any], vrf_hint: str) -> None:
    vrf = _str(fam.get("vrfName")) or vrf_hint or DEFAULT_VRF
    where = _where(vrf, name or "family")
    peers = fam.get("peers", {})
    if not isinstance(peers, Mapping):
        out.unknown.append(f"{where}: peers is not an object ({_short(peers)})")
        peers = {}
    keys = []
    for peer_name, raw_peer in peers.items():
        key = peer_name if vrf == DEFAULT_VRF else f"{vrf}/{peer_name}"
        keys.append(key)
        if not isinstance(raw_peer, Mapping):
            out.unknown.append(f"{where} peer {peer_name}: not an object ({_short(raw_peer)})")
            continue
        peer = _peer(out, peer_name, raw_peer, vrf, name, where)
        old = out.peers.get(key)
        out.peers[key] = peer if old is None else _merge(old, peer)
    fkey = name if vrf == DEFAULT_VRF else f"{vrf}/{name}"
    out.families[fkey] = BgpFamily(
        name, vrf, _str(fam.get("routerId")), _asn(out, fam, "as", where), _int(out, fam, "tableVersion", where),
        fam.get("updateDelayInProgress") is True, tuple(keys))


_PEER_INTS = ("prefixes_sent", "pfxSnt"), ("connections_established", "connectionsEstablished"), \
    ("connections_dropped", "connectionsDropped"), ("msg_rcvd", "msgRcvd"), ("msg_sent", "msgSent")


def _peer(out: BgpSummary, name: str, p: Mapping[str, Any], vrf: str, family: str, where: str) -> BgpPeer:
    at = f"{where} peer {name}"  # for the reasons; an integer field is taken as it is before any helper runs
    peer = BgpPeer(name, vrf, families=(family,))
    get = p.get
    state = get("state")
    if isinstance(state, str) and state:
        fsm, _, why = state.partition(" (")
        peer.state = fsm
        peer.peer_state = _str(get("peerState")) or why.rstrip(")")
    else:
        out.unknown.append(f"{at}: no state ({_short(state)})")
    if get("idType") == "interface":
        peer.interface = name
    else:
        peer.interface = _str(get("scopeIfName"))
    value = get("remoteAs")
    # 0: not learned yet
    peer.remote_as = (value if type(value) is int else _asn(out, p, "remoteAs", at, required=True)) or None
    value = get("localAs")
    peer.local_as = value if type(value) is int else _asn(out, p, "localAs", at)
    peer.hostname = _str(get("hostname"))
    peer.desc = _str(get("desc"))
    if get("peerUptime") != "never":
        msec = get("peerUptimeMsec")
        if type(msec) is not int:
            msec = _int(out, p, "peerUptimeMsec", at)
        peer.uptime_s = msec / 1000 if msec is not None else None
        epoch = get("peerUptimeEstablishedEpoch")
        peer.established_epoch = epoch if type(epoch) is int else _int(out, p, "peerUptimeEstablishedEpoch", at)
        if out.taken_at is None and msec is not None and peer.established_epoch is not None:
            out.taken_at = peer.established_epoch + msec / 1000
    rcvd = "pfxRcd" if "pfxRcd" in p else "prefixReceivedCount"
    value = get(rcvd)
    peer.prefixes_received = value if type(value) is int else _int(out, p, rcvd, at)
    for attr, key in _PEER_INTS:
        value = get(key)
        setattr(peer, attr, value if type(value) is int else _int(out, p, key, at))
    return peer


def _merge(old: BgpPeer, new: BgpPeer) -> BgpPeer:
    """One peer seen in another family: session facts stay the first family's, prefixes add up, and a family
    whose session is not Established wins the state (never hidden behind an Established one)."""
    old.families += new.families
    old.prefixes_received = _add(old.prefixes_received, new.prefixes_received)
    old.prefixes_sent = _add(old.prefixes_sent, new.prefixes_sent)
    if old.established and not new.established:
        old.state, old.peer_state = new.state, new.peer_state
    return old


def _add(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def _int(out: BgpSummary, obj: Mapping[str, Any], key: str, where: str) -> int | None:
    """An integer field; absent (this FRR does not print it) is None, anything else not an integer is None with a
    reason."""
    value = obj.get(key)
    if type(value) is int:
        return value
    if value is not None:
        out.unknown.append(f"{where}: {key} is not an integer ({_short(value)})")
    return None


def _asn(out: BgpSummary, obj: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> int | None:
    """An AS number: an integer, or a string in asdot (``"65000.10"``) or plain notation (lib/asn.c
    ``asn_asn2json``, FRR >= 9.0 with ``bgp as-notation``)."""
    value = obj.get(key)
    if type(value) is int:
        return value
    if isinstance(value, str):
        high, dot, low = value.partition(".")
        if high.isdigit() and (not dot or low.isdigit()):
            return int(high) * 65536 + int(low) if dot else int(high)
    if value is not None or required:
        out.unknown.append(f"{where}: {key} is not an AS number ({_short(value)})")
    return None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _where(vrf: str, what: str) -> str:
    return what if vrf in ("", DEFAULT_VRF) else f"vrf {vrf} {what}"


def _short(value: Any) -> str:
    if isinstance(value, (list, dict)) and len(value) > 3:
        return f"a {type(value).__name__} of {len(value)}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --- frame reader -----------------------------------------------------------------------------------------------------

COUNTERS = ("bgp_established", "bgp_dropped")  # BgpSummary.snapshot's counters, in its order
_NONE = type(None)
_INT, _INT_OR_NONE, _STR, _NONE_ONLY = {int}, {int, _NONE}, {str}, {_NONE}
_OPTIONAL_INTS = ("pfxSnt", "msgRcvd", "msgSent")  # _PEER_INTS read for the reasons only
_AS_TEXT: dict[int | None, str] = {None: ""}  # remote AS -> its state word


def _families(doc: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], str]] | None:
    """(family name, family, VRF hint) of each family :func:`_instance` reads, in its order; None where it or
    :func:`parse_bgp_summary` gives a reason."""
    if _is_family(doc):
        return [("", doc, "")]
    out: list[tuple[str, Mapping[str, Any], str]] = []
    for key, value in doc.items():
        if _is_family(value):
            out.append((key, value, "") if key.startswith(_FAMILY_PREFIXES) else ("", value, key))
        elif isinstance(value, Mapping):  # show bgp vrf all summary json: VRF -> families
            for name, fam in value.items():
                if _is_family(fam):
                    out.append((name, fam, key) if name.startswith(_FAMILY_PREFIXES) else ("", fam, name))
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


def _peer_columns(out: BgpSummary, peers: list[dict[str, Any]], names: list[str], where: str
                  ) -> tuple[list[str], list[str], list[str], list[str], list[int], list[int]] | None:
    """The state words (FSM state, peerState, hostname, remote AS) and the counters of a family's peers, column by
    column, as :func:`_peer` reads them; None where it gives a reason (``out`` collects those of its helpers, which
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
        remote = [a if type(a) is int else _asn(out, p, "remoteAs", f"{where} peer {k}", required=True)
                  for a, p, k in zip(remote, peers, names, strict=True)]
    remote_as = list(map(_AS_TEXT.get, remote))  # a fabric's few thousand AS numbers, each written once
    if None in remote_as:
        for a in set(remote):
            if a not in _AS_TEXT and len(_AS_TEXT) < 65536:
                _AS_TEXT[a] = "" if not a else str(a)  # 0: not learnt yet, read as None
        remote_as = [_AS_TEXT[a] if a in _AS_TEXT else "" if not a else str(a) for a in remote]
    if not _kinds(peers, "localAs") <= _INT_OR_NONE:
        for p, k in zip(peers, names, strict=True):
            if type(p.get("localAs")) is not int:
                _asn(out, p, "localAs", f"{where} peer {k}")
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
    """:func:`_peer`'s time of the output: the first peer's with both uptime fields."""
    for p in peers:
        msec, epoch = p.get("peerUptimeMsec"), p.get("peerUptimeEstablishedEpoch")
        if p.get("peerUptime") != "never" and type(msec) is int and type(epoch) is int:
            return epoch + msec / 1000
    return None


def read_bgp_summary_frame(raw: str | bytes, *, device: str = "", version: str | None = None) -> Frame | None:
    """:meth:`BgpSummary.snapshot` of :func:`parse_bgp_summary`'s reading of ``raw`` as a
    :class:`~hwaac.telemetry.frames.Frame` (peers as ports; counters :data:`COUNTERS`; the state words), when
    ``raw`` is one JSON document that it reads with no reason and every peer's counters are integers from 0 to
    2**64 - 1; None for anything else, which the parser reads and says why. ``raw`` may be the file's bytes (UTF-8),
    decoded faster than its text. Never raises."""
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
        vrf = _str(fam.get("vrfName")) or hint or DEFAULT_VRF
        where = _where(vrf, name or "family")
        peers = fam.get("peers", {})
        if not isinstance(peers, Mapping):
            return None
        _asn(out, fam, "as", where)
        _int(out, fam, "tableVersion", where)
        values = list(peers.values())
        if not values:
            continue
        if set(map(type, values)) != {dict}:
            return None
        names = list(peers)
        columns = _peer_columns(out, values, names, where)
        if columns is None or out.unknown:
            return None
        if taken_at is None:
            taken_at = _taken_at(values)
        fsm, peer_state, hosts, remote_as, est, drop = columns
        keys = names if vrf == DEFAULT_VRF else [f"{vrf}/{n}" for n in names]
        if at.keys().isdisjoint(keys):  # the usual: every peer in one family
            at.update(zip(keys, range(len(states), len(states) + len(keys)), strict=True))
            rows = list(zip(fsm, peer_state, hosts, remote_as, strict=True))
            # one dict for the peers of the same words (a switch's peers share a few): read only, as frames are
            shared = {row: {"bgp_state": a, "peer_state": b, "vrf": vrf, "hostname": c, "remote_as": d}
                      for row in set(rows) for a, b, c, d in (row,)}
            states += map(shared.__getitem__, rows)
            established += est
            dropped += drop
            continue
        for i, key in enumerate(keys):
            row = at.get(key)
            if row is None:
                at[key] = len(states)
                states.append({"bgp_state": fsm[i], "peer_state": peer_state[i], "vrf": vrf, "hostname": hosts[i],
                               "remote_as": remote_as[i]})
                established.append(est[i])
                dropped.append(drop[i])
            elif states[row]["bgp_state"] == ESTABLISHED and fsm[i] != ESTABLISHED:  # _merge: not Established wins
                states[row] = {**states[row], "bgp_state": fsm[i], "peer_state": peer_state[i]}  # shared: a copy
    values = np.empty((len(states), 2 if states else 0), dtype=np.uint64)
    try:
        if states:
            values[:, 0], values[:, 1] = established, dropped
    except OverflowError:  # below 0 or above 2**64 - 1
        return None
    return Frame(TOOL, device, taken_at, version or "", list(at), COUNTERS if states else (), values,
                 states or None)


__all__ = ["COUNTERS", "ESTABLISHED", "BgpFamily", "BgpPeer", "BgpSummary", "parse_bgp_summary",
           "read_bgp_summary_frame"]
