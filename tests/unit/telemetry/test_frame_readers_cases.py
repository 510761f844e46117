"""Frame readers against their parsers on hand-made outputs of the switch formats (counters-db, bgp-summary,
intf-status), one edge a case (a value that is no count or does not fit, names missing, repeated or in another
order, ports that differ, the other layouts of a format). Each checks what test_frame_readers.check checks; "usual"
False marks a plain output the frame reader leaves to its parser (a form other than the tool's usual print). The
host formats: test_frame_readers_host_cases.py."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.unit.telemetry.frame_case_tables import case_raw
from tests.unit.telemetry.test_frame_readers import check

# --- counters-db ------------------------------------------------------------------------------------------------------

UC, NUC, ERR, DISC = (f"SAI_PORT_STAT_IF_IN_{n}" for n in ("UCAST_PKTS", "NON_UCAST_PKTS", "ERRORS", "DISCARDS"))
FIELDS = {UC: "100", NUC: "5", ERR: "0", DISC: "7", "SAI_PORT_STAT_IF_OUT_OCTETS": "12345"}
UNICAST = "SAI_QUEUE_TYPE_UNICAST"


def _db(
    ports: dict[str, Any] | None = None,
    *,
    wrap: tuple[str, ...] = (),
    extra: dict[str, Any] | None = None,
    by_name: bool = False,
    **change: Any,
) -> str:
    """A COUNTERS_DB dump of ``ports`` (default: Ethernet0 and Ethernet4 with ``FIELDS``, Ethernet4's changed by
    ``change``; a port's hash ``...``: none); the hashes named in ``wrap`` in redis-dump-load's layout (``"all"``:
    every one)."""
    if ports is None:  # a change's key: the SAI name after SAI_PORT_STAT_ (X_...: as it is); None: left out
        changed = {**FIELDS, **{k if k.startswith("X_") else f"SAI_PORT_STAT_{k}": v for k, v in change.items()}}
        ports = {"Ethernet0": FIELDS, "Ethernet4": {k: v for k, v in changed.items() if v is not None}}
    doc: dict[str, Any] = {}
    if by_name:
        doc.update(ports)
    else:
        doc["COUNTERS_PORT_NAME_MAP"] = {port: f"oid:0x{n + 1}" for n, port in enumerate(ports)}
        doc.update({f"COUNTERS:oid:0x{n + 1}": fields for n, fields in enumerate(ports.values()) if fields is not ...})
    doc.update(extra or {})
    for key in list(doc):
        if "all" in wrap or key in wrap:
            doc[key] = {"expireat": 1602532804.24, "ttl": -0.001, "type": "hash", "value": doc[key]}
    return json.dumps(doc)


def _queues(*queues: tuple[str, str, dict[str, str]]) -> dict[str, Any]:
    """The queue name and type maps and hashes of ``(PORT:INDEX, type, fields)``."""
    out: dict[str, Any] = {"COUNTERS_QUEUE_NAME_MAP": {}, "COUNTERS_QUEUE_TYPE_MAP": {}}
    for n, (queue, kind, fields) in enumerate(queues):
        oid = f"oid:0x15{n:04x}"
        out["COUNTERS_QUEUE_NAME_MAP"][queue] = oid
        if kind:
            out["COUNTERS_QUEUE_TYPE_MAP"][oid] = kind
        out[f"COUNTERS:{oid}"] = fields
    return out


Q = {"SAI_QUEUE_STAT_PACKETS": "9", "SAI_QUEUE_STAT_DROPPED_PACKETS": "1"}
QE = {**Q, "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": "2"}  # read whatever the queue's kind
SONIC_DB_CLI = """admin@sonic:~$ sonic-db-cli COUNTERS_DB HGETALL COUNTERS_PORT_NAME_MAP
{'Ethernet0': 'oid:0x1'}
admin@sonic:~$ sonic-db-cli COUNTERS_DB HGETALL COUNTERS:oid:0x1
{'SAI_PORT_STAT_IF_IN_ERRORS': '0', 'SAI_PORT_STAT_IF_IN_DISCARDS': '7'}
"""

COUNTERS_DB: list[tuple[str, str, bool]] = [
    ("flat", _db(), True),
    ("redis-dump-load", _db(wrap=("all",)), True),
    ("both layouts in one dump", _db(wrap=("COUNTERS:oid:0x2",)), True),
    ("ports by name (gNMI COUNTERS/Ethernet*)", _db(by_name=True), True),
    ("ports by name beside a PORT:INDEX hash", _db({"Ethernet0": FIELDS, "Ethernet0:3": FIELDS}, by_name=True), True),
    ("fields in another order", _db({"Ethernet0": FIELDS, "Ethernet4": dict(reversed(FIELDS.items()))}), True),
    ("an unread field that is no count", _db(X_SAI_VENDOR_STAT="N/A"), True),
    ("leading zeros", _db(IF_IN_ERRORS="007"), True),
    ("the largest count", _db(IF_IN_ERRORS=str(2**64 - 1)), True),
    ("a count past 64 bits", _db(IF_IN_ERRORS=str(2**64)), True),
    ("a sum past 64 bits", _db(IF_IN_UCAST_PKTS=str(2**64 - 1), IF_IN_NON_UCAST_PKTS="1"), True),
    ("N/A", _db(IF_IN_ERRORS="N/A"), True),
    ("an empty value", _db(IF_IN_ERRORS=""), True),
    ("a comma in a value and an empty one", _db(IF_IN_ERRORS="1,2", IF_IN_DISCARDS=""), True),
    ("a field named type", _db({p: {**FIELDS, "type": "port"} for p in ("Ethernet0", "Ethernet4")}), True),
    (
        "a sum with a part missing",
        _db({p: {k: v for k, v in FIELDS.items() if k != NUC} for p in ("Ethernet0", "Ethernet4")}),
        True,
    ),
    ("ports with other fields", _db(IF_IN_DISCARDS=None), True),
    ("ports with as many other fields", _db(IF_IN_DISCARDS=None, IF_OUT_ERRORS="3"), True),
    ("a port without its hash", _db({"Ethernet0": FIELDS, "Ethernet4": ...}), True),
    ("an empty hash", _db({"Ethernet0": FIELDS, "Ethernet4": {}}), True),
    ("an empty port map", _db({}), True),
    (
        "queues with PFC watchdog status",
        _db(
            extra=_queues(
                ("Ethernet0:3", UNICAST, {**Q, "PFC_WD_STATUS": "operational"}),
                ("Ethernet4:3", UNICAST, Q),
                ("Ethernet0:8", "SAI_QUEUE_TYPE_MULTICAST", Q),
                ("Ethernet4:8", "SAI_QUEUE_TYPE_MULTICAST", Q),
            )
        ),
        True,
    ),
    (
        "queues in redis-dump-load",
        _db(wrap=("all",), extra=_queues(("Ethernet0:3", UNICAST, Q), ("Ethernet4:3", UNICAST, Q))),
        True,
    ),
    (
        "a VOQ queue, passed over",
        _db(
            extra=_queues(
                ("Ethernet0:3", UNICAST, Q),
                ("Ethernet4:3", UNICAST, Q),
                ("Ethernet4:9", "SAI_QUEUE_TYPE_UNICAST_VOQ", Q),
            )
        ),
        True,
    ),
    (
        "only VOQ queues",
        _db(
            extra=_queues(
                ("Ethernet0:9", "SAI_QUEUE_TYPE_UNICAST_VOQ", Q), ("Ethernet4:9", "SAI_QUEUE_TYPE_UNICAST_VOQ", Q)
            )
        ),
        True,
    ),
    ("queues with no field read", _db(extra=_queues(("Ethernet0:3", UNICAST, {}), ("Ethernet4:3", UNICAST, {}))), True),
    ("a queue of no known type", _db(extra=_queues(("Ethernet0:3", "", QE), ("Ethernet4:3", "", QE))), True),
    ("ports with other queues", _db(extra=_queues(("Ethernet0:3", UNICAST, Q))), True),
    (
        "ports with other queue indices",
        _db(extra=_queues(("Ethernet0:3", UNICAST, Q), ("Ethernet4:4", UNICAST, Q))),
        True,
    ),
    (
        "a queue of a port not in the map",
        _db(extra=_queues(("Ethernet0:3", UNICAST, Q), ("Ethernet4:3", UNICAST, Q), ("Ethernet8:3", UNICAST, Q))),
        True,
    ),
    (
        "a queue that is not PORT:INDEX",
        _db(extra=_queues(("Ethernet0:x", UNICAST, Q), ("Ethernet4:x", UNICAST, Q))),
        True,
    ),
    (
        "a queue's count that is no count",
        _db(
            extra=_queues(("Ethernet0:3", UNICAST, Q), ("Ethernet4:3", UNICAST, {**Q, "SAI_QUEUE_STAT_PACKETS": "N/A"}))
        ),
        True,
    ),
    ("only queues", _db({}, extra=_queues(("Ethernet0:3", UNICAST, Q), ("Ethernet4:3", UNICAST, Q))), True),
    ("a JSON list", "[]", True),
    ("not an object of hashes", '{"COUNTERS_PORT_NAME_MAP": "x"}', True),
    ("cut", _db()[:-12], True),
    ("a JSON number for a count", _db(IF_IN_ERRORS=0), False),
    ("a decimal count", _db(IF_IN_ERRORS="12.0"), False),
    ("other digits than ASCII", _db(IF_IN_ERRORS="١٢"), False),
    ("sonic-db-cli's text", SONIC_DB_CLI, False),
]


@pytest.mark.parametrize(("case", "raw", "usual"), COUNTERS_DB, ids=[c[0] for c in COUNTERS_DB])
def test_counters_db(case: str, raw: str, usual: bool) -> None:
    check("counters-db", raw, usual=usual)


def test_counters_db_queues_and_sums_where_the_parser_has_them() -> None:
    frame = check("counters-db", case_raw(COUNTERS_DB, "queues with PFC watchdog status"))
    assert frame is not None and frame.names[:2] == ("rx_ok", "rx_err") and frame.values[0, 0] == 105
    assert frame.names[-4:] == ("q3_uc_pkts", "q3_uc_drop", "q8_mc_pkts", "q8_mc_drop")
    assert frame.state == [{"pfcwd3_status": "operational"}, {}]


# --- bgp-summary ------------------------------------------------------------------------------------------------------

PEER = {
    "remoteAs": 65002,
    "version": 4,
    "msgRcvd": 10,
    "msgSent": 11,
    "peerUptime": "1d",
    "peerUptimeMsec": 1500,
    "peerUptimeEstablishedEpoch": 1700000000,
    "pfxRcd": 3,
    "pfxSnt": 2,
    "state": "Established",
    "connectionsEstablished": 1,
    "connectionsDropped": 0,
    "idType": "ipv4",
}


def _bgp(*changes: dict[str, Any], family: dict[str, Any] | None = None, **top: Any) -> str:
    """A summary of peers 10.0.0.1 (PEER) and 10.0.0.3... (PEER with each of ``changes``; None drops a key)."""
    peers = {"10.0.0.1": PEER}
    for n, change in enumerate(changes or ({},)):
        peers[f"10.0.0.{2 * n + 3}"] = {k: v for k, v in {**PEER, **change}.items() if v is not None}
    return json.dumps(
        top
        or {
            "ipv4Unicast": {
                "routerId": "10.0.0.0",
                "as": 65001,
                "vrfName": "default",
                "tableVersion": 3,
                "peers": peers,
                **(family or {}),
            }
        }
    )


DOWN = {"state": "Active", "peerUptime": "never", "peerUptimeMsec": 0, "peerUptimeEstablishedEpoch": None}
BGP_CASES: list[tuple[str, str, bool]] = [
    ("established", _bgp(), True),
    ("Idle (Admin), before FRR 8", _bgp({"state": "Idle (Admin)"}), True),
    ("peerState, FRR 8", _bgp({"state": "Active", "peerState": "Policy"}, {"peerState": "OK"}), True),
    ("hostnames, some", _bgp({"hostname": "spine1"}, {"hostname": 5}), True),
    ("a remote AS in asdot", _bgp({"remoteAs": "1.10"}), True),
    ("a remote AS not learnt yet", _bgp({"remoteAs": 0}), True),
    ("a remote AS that is none", _bgp({"remoteAs": "x"}), True),
    ("no remote AS", _bgp({"remoteAs": None}), True),
    ("a local AS in asdot", _bgp({"localAs": "1.10"}), True),
    ("a local AS that is none", _bgp({"localAs": [1]}), True),
    ("never up, its uptime unread", _bgp({**DOWN, "peerUptimeMsec": "x"}), True),
    ("up, its uptime not an integer", _bgp({"peerUptimeMsec": 1.5}), True),
    ("the first peer never up", _bgp(family={"peers": {"10.0.0.9": {**PEER, **DOWN}, "10.0.0.1": PEER}}), True),
    (
        "the first peer never up, with uptime fields",
        _bgp(
            family={
                "peers": {
                    "10.0.0.9": {**PEER, **DOWN, "peerUptimeMsec": 5, "peerUptimeEstablishedEpoch": 1600000000},
                    "10.0.0.1": PEER,
                }
            }
        ),
        True,
    ),
    ("no session counters, before FRR 7.2", _bgp({"connectionsEstablished": None}), True),
    ("sessions dropped below zero", _bgp({"connectionsDropped": -1}), True),
    ("sessions dropped past 64 bits", _bgp({"connectionsDropped": 2**64}), True),
    ("sessions a bool", _bgp({"connectionsEstablished": True}), True),
    ("messages not an integer", _bgp({"msgRcvd": "10"}), True),
    ("prefixReceivedCount only, before FRR 7.3", _bgp({"pfxRcd": None, "prefixReceivedCount": 4}), True),
    ("prefixReceivedCount unread beside pfxRcd", _bgp({"prefixReceivedCount": "x"}), True),
    ("pfxRcd not an integer", _bgp({"pfxRcd": "x"}), True),
    ("prefixReceivedCount not an integer, no pfxRcd", _bgp({"pfxRcd": None, "prefixReceivedCount": "x"}), True),
    ("no state", _bgp({"state": None}), True),
    ("a table version that is none", _bgp(family={"tableVersion": "x"}), True),
    ("a family AS that is none", _bgp(family={"as": "x"}), True),
    ("a family AS in asdot", _bgp(family={"as": "1.10"}), True),
    (
        "a peer in two families, down in the second",
        _bgp(
            ipv4Unicast={"routerId": "10.0.0.0", "as": 65001, "peers": {"10.0.0.1": PEER}},
            ipv6Unicast={"routerId": "10.0.0.0", "as": 65001, "peers": {"10.0.0.1": {**PEER, **DOWN}, "fc00::1": PEER}},
        ),
        True,
    ),
    (
        "a peer in two families, down in the first",
        _bgp(
            ipv4Unicast={"routerId": "10.0.0.0", "as": 65001, "peers": {"10.0.0.1": {**PEER, "state": "Idle (Admin)"}}},
            ipv6Unicast={"routerId": "10.0.0.0", "as": 65001, "peers": {"10.0.0.1": PEER}},
        ),
        True,
    ),
    ("a VRF", _bgp(family={"vrfName": "red"}), True),
    (
        "vrf all",
        _bgp(
            red={"ipv4Unicast": {"vrfName": "red", "peers": {"10.0.0.1": PEER}}},
            default={"ipv4Unicast": {"peers": {"10.0.0.1": PEER}}},
        ),
        True,
    ),
    ("vrf all of one family", _bgp(red={"vrfName": "red", "peers": {"10.0.0.1": PEER}}), True),
    ("a family without neighbours", _bgp(ipv4Unicast={}), True),
    ("no neighbour at all", "{}", True),
    ("a peer that is no object", _bgp(family={"peers": {"10.0.0.1": 5}}), True),
    ("peers that are no object", _bgp(family={"peers": [PEER]}), True),
    ("no family", _bgp(totals={"x": {"y": 1}}), True),
    ("a VRF of families without neighbours", _bgp(red={"ipv4Unicast": {}}), True),
    ("a VRF that is not one", _bgp(default={"ipv4Unicast": {"peers": {"10.0.0.1": PEER}}}, red={"x": {}}), True),
    (
        "a VRF holding something else",
        _bgp(default={"ipv4Unicast": {"peers": {"10.0.0.1": PEER}}}, red={"ipv4Unicast": {"peers": {}}, "x": {"y": 1}}),
        True,
    ),
    ("a top level list", "[]", True),
    ("not JSON", "% Unknown command", True),
    ("two documents", _bgp() + "\n" + _bgp(), False),
]


@pytest.mark.parametrize(("case", "raw", "usual"), BGP_CASES, ids=[c[0] for c in BGP_CASES])
def test_bgp_summary(case: str, raw: str, usual: bool) -> None:
    check("bgp-summary", raw, usual=usual)


def test_bgp_summary_words_where_the_parser_has_them() -> None:
    frame = check("bgp-summary", case_raw(BGP_CASES, "a peer in two families, down in the second"))
    assert frame is not None and frame.ports == ["10.0.0.1", "fc00::1"] and frame.taken_at == 1700000001.5
    assert frame.state is not None and frame.state[0] == {
        "bgp_state": "Active",
        "peer_state": "",
        "vrf": "default",
        "hostname": "",
        "remote_as": "65002",
    }


# --- intf-status ------------------------------------------------------------------------------------------------------

_HEAD = (
    "  Interface            Lanes    Speed    MTU    FEC           Alias    Vlan    Oper    Admin     Type\n"
    "-----------  ---------------  -------  -----  -----  --------------  ------  ------  -------  -------\n"
)


def _row(port: str = "Ethernet0", oper: str = "up", admin: str = "up", alias: str = "etp1") -> str:
    return (
        f"{port:>11}  {'0,1,2,3':>15}  {'400G':>7}  {'9100':>5}  {'rs':>5}  {alias:>14}  {'routed':>6}  "
        f"{oper:>6}  {admin:>7}  {'QSFP-DD':>7}\n"
    )


STATUS_CASES = [
    ("two rows", _HEAD + _row() + _row("Ethernet8", alias="etp2"), True),
    ("a row admin down", _HEAD + _row() + _row("Ethernet8", oper="down", admin="down"), True),
    ("oper N/A", _HEAD + _row() + _row("Ethernet8", oper="N/A"), True),
    ("admin empty", _HEAD + _row() + _row("Ethernet8", admin=""), True),
    ("an interface twice", _HEAD + _row() + _row(), True),
    ("the last row cut", _HEAD + _row() + _row("Ethernet8")[:40] + "\n", True),
    ("a blank line between rows", _HEAD + _row() + "\n" + _row("Ethernet8"), False),
    ("a prompt after the table", _HEAD + _row() + "admin@sonic:~$ show version\n", False),
    ("a second table", _HEAD + _row() + _HEAD + _row("Ethernet8"), True),
    ("an elided row", _HEAD + _row() + "        ...\n" + _row("Ethernet8"), True),
    ("a row off the columns", _HEAD + _row() + "Ethernet8 0,1 400G 9100 rs etp2 routed up up QSFP\n", True),
    ("no row", _HEAD, True),
    ("no table", "% Unknown command\n", True),
    ("another table", _HEAD.replace("  Interface", "       Port") + _row(), True),
]


@pytest.mark.parametrize("fmt", ["intf-status", "intf-status judged"])
@pytest.mark.parametrize(("case", "raw", "usual"), STATUS_CASES, ids=[c[0] for c in STATUS_CASES])
def test_intf_status(case: str, raw: str, usual: bool, fmt: str) -> None:
    check(fmt, raw, usual=usual)
