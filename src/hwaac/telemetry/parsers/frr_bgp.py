"""Reader of FRR's ``show bgp [vrf NAME|all] [ipv4|ipv6 [unicast]] summary json`` (also ``show ip bgp summary
json``): each BGP peer's session state and counters, as bgpd prints them (``bgpd/bgp_vty.c`` ``bgp_show_summary``).

The one place this format is read: :mod:`hwaac.verify.facts`, :mod:`hwaac.apply.bgp` and :mod:`hwaac.lab.status`
call it. Shapes, keys per FRR version and what is not read: ``docs/telemetry/frr.md``. Its fast path for network
health, straight into columns, is :mod:`hwaac.telemetry.parsers.frr_bgp_frame`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hwaac.telemetry.model import Snapshot
from hwaac.telemetry.parsers.frr_json import read_documents

TOOL = "show bgp summary json"
ESTABLISHED = "Established"
DEFAULT_VRF = "default"
# the first word of every address-family key bgpd prints (bgp_vty.c get_afi_safi_json_str: ipv4Unicast, ipv6Vpn,
# l2VpnEvpn...); any other key of an object of families is a VRF (``show bgp vrf all ... summary json``)
FAMILY_PREFIXES = ("ipv4", "ipv6", "l2Vpn")


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
        snap = Snapshot(
            TOOL, device=self.device, taken_at=self.taken_at, version=self.version, unknown=list(self.unknown)
        )
        for key, p in self.peers.items():
            sample = snap.port(key)
            sample.counters["bgp_established"] = p.connections_established
            sample.counters["bgp_dropped"] = p.connections_dropped
            sample.state.update(
                bgp_state=p.state or "",
                peer_state=p.peer_state,
                vrf=p.vrf,
                hostname=p.hostname,
                remote_as="" if p.remote_as is None else str(p.remote_as),
            )
        return snap


def parse_bgp_summary(
    raw: str | bytes | Mapping[str, Any], *, device: str = "", version: str | None = None
) -> BgpSummary:
    """Read ``show bgp ... summary json`` (the text, or the document already decoded). Never raises."""
    out = BgpSummary(device=device, version=version or "")
    read_documents(
        out,
        raw,
        lambda doc: _instance(out, doc, "", top=True),
        "address families",
        "no address family in the document: not a BGP summary",
    )
    default = [f for f in out.families.values() if f.vrf == DEFAULT_VRF] or list(out.families.values())
    if default:
        out.router_id, out.local_as = default[0].router_id, default[0].local_as
    return out


def is_family(obj: Any) -> bool:
    return isinstance(obj, Mapping) and ("peers" in obj or "routerId" in obj)


def _instance(out: BgpSummary, doc: Mapping[str, Any], vrf: str, *, top: bool) -> int:
    """An object of families (or one family printed flat, or, at the top, an object of VRFs); the number of
    families read."""
    if is_family(doc):
        _family(out, "", doc, vrf)
        return 1
    read = 0
    for key, value in doc.items():
        if is_family(value):
            if key.startswith(FAMILY_PREFIXES):
                _family(out, key, value, vrf)
            else:  # show bgp vrf all ipv4 unicast summary json: VRF -> the family printed flat
                _family(out, "", value, key)
            read += 1
        elif isinstance(value, Mapping) and top:
            read += _instance(out, value, key, top=False)  # show bgp vrf all summary json: VRF -> families
        elif isinstance(value, Mapping) and not value:
            continue  # a family or VRF without neighbours
        else:
            out.unknown.append(f"{where_in_vrf(vrf, key)}: not an address family ({_short(value)})")
    return read


def _family(out: BgpSummary, name: str, fam: Mapping[str, Any], vrf_hint: str) -> None:
    vrf = str_field(fam.get("vrfName")) or vrf_hint or DEFAULT_VRF
    where = where_in_vrf(vrf, name or "family")
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
        name,
        vrf,
        str_field(fam.get("routerId")),
        asn_field(out, fam, "as", where),
        int_field(out, fam, "tableVersion", where),
        fam.get("updateDelayInProgress") is True,
        tuple(keys),
    )


_PEER_INTS = (
    ("prefixes_sent", "pfxSnt"),
    ("connections_established", "connectionsEstablished"),
    ("connections_dropped", "connectionsDropped"),
    ("msg_rcvd", "msgRcvd"),
    ("msg_sent", "msgSent"),
)


def _peer(out: BgpSummary, name: str, p: Mapping[str, Any], vrf: str, family: str, where: str) -> BgpPeer:
    at = f"{where} peer {name}"  # for the reasons; an integer field is taken as it is before any helper runs
    peer = BgpPeer(name, vrf, families=(family,))
    get = p.get
    state = get("state")
    if isinstance(state, str) and state:
        fsm, _, why = state.partition(" (")
        peer.state = fsm
        peer.peer_state = str_field(get("peerState")) or why.rstrip(")")
    else:
        out.unknown.append(f"{at}: no state ({_short(state)})")
    if get("idType") == "interface":
        peer.interface = name
    else:
        peer.interface = str_field(get("scopeIfName"))
    value = get("remoteAs")
    # 0: not learned yet
    peer.remote_as = (value if type(value) is int else asn_field(out, p, "remoteAs", at, required=True)) or None
    value = get("localAs")
    peer.local_as = value if type(value) is int else asn_field(out, p, "localAs", at)
    peer.hostname = str_field(get("hostname"))
    peer.desc = str_field(get("desc"))
    if get("peerUptime") != "never":
        msec = get("peerUptimeMsec")
        if type(msec) is not int:
            msec = int_field(out, p, "peerUptimeMsec", at)
        peer.uptime_s = msec / 1000 if msec is not None else None
        epoch = get("peerUptimeEstablishedEpoch")
        peer.established_epoch = epoch if type(epoch) is int else int_field(out, p, "peerUptimeEstablishedEpoch", at)
        if out.taken_at is None and msec is not None and peer.established_epoch is not None:
            out.taken_at = peer.established_epoch + msec / 1000
    rcvd = "pfxRcd" if "pfxRcd" in p else "prefixReceivedCount"
    value = get(rcvd)
    peer.prefixes_received = value if type(value) is int else int_field(out, p, rcvd, at)
    for attr, key in _PEER_INTS:
        value = get(key)
        setattr(peer, attr, value if type(value) is int else int_field(out, p, key, at))
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


def int_field(out: BgpSummary, obj: Mapping[str, Any], key: str, where: str) -> int | None:
    """An integer field; absent (this FRR does not print it) is None, anything else not an integer is None with a
    reason."""
    value = obj.get(key)
    if type(value) is int:
        return value
    if value is not None:
        out.unknown.append(f"{where}: {key} is not an integer ({_short(value)})")
    return None


def asn_field(out: BgpSummary, obj: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> int | None:
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


def str_field(value: Any) -> str:
    return value if isinstance(value, str) else ""


def where_in_vrf(vrf: str, what: str) -> str:
    return what if vrf in ("", DEFAULT_VRF) else f"vrf {vrf} {what}"


def _short(value: Any) -> str:
    if isinstance(value, (list, dict)) and len(value) > 3:
        return f"a {type(value).__name__} of {len(value)}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = [
    "DEFAULT_VRF",
    "ESTABLISHED",
    "FAMILY_PREFIXES",
    "TOOL",
    "BgpFamily",
    "BgpPeer",
    "BgpSummary",
    "asn_field",
    "int_field",
    "is_family",
    "parse_bgp_summary",
    "str_field",
    "where_in_vrf",
]
