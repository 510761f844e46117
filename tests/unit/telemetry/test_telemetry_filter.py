"""The host module's output filter (plugins/module_utils/telemetry_tools.py filter_output): its name lists are the
readers' tables, a filtered line output is the same lines in the same order, and the readers read the same ports
and counters from the filtered output as from the whole one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hwaac.health.parsers.ib_counters import LEGACY_FILES
from hwaac.telemetry.parsers.frr_bgp import parse_bgp_summary
from hwaac.telemetry.parsers.host_ethtool import TABLE, _numbered, parse_mlx5_ethtool
from hwaac.telemetry.parsers.host_rdma import PORT_COUNTERS, RDMA_COUNTERS, parse_ib_sysfs_counters
from hwaac.telemetry.parsers.sonic_counters_db import parse_counters_db
from hwaac.telemetry.parsers.sonic_sai_stats import PORT_STATS
from hwaac.telemetry.tools import BGP_PEER_FIELDS, COUNTERS_DB_FIELDS, ETHTOOL_NAMES, SYSFS_NAMES, filter_output

FIX = Path(__file__).parents[2] / "fixtures"
ETHTOOL = sorted((FIX / "health" / "ethtool").glob("*/*.txt"))
SYSFS = sorted(p for p in (FIX / "health" / "ib-counters").glob("*/*.txt") if p.name != "recorded.txt")
DUMPS = sorted((FIX / "telemetry" / "counters-db").glob("*.json"))


def test_ethtool_names_are_the_names_the_reader_maps() -> None:
    numbered = {n for n in ETHTOOL_NAMES if n.startswith(("rx_prio", "tx_prio", "rx_err_lane_"))}
    assert ETHTOOL_NAMES - numbered == set(TABLE)
    assert all(_numbered(n) is not None for n in numbered)
    # every per-priority and per-lane name the reader maps, for the 8 priorities of 802.1Q and up to 8 lanes
    mapped = {
        f"{d}_prio{p}_{k}"
        for d in ("rx", "tx")
        for p in range(8)
        for k in ("pause", "pause_duration", "discards")
        if _numbered(f"{d}_prio{p}_{k}")
    } | {f"rx_err_lane_{n}_phy" for n in range(8)}
    assert numbered == mapped


def test_sysfs_names_are_the_reader_s_and_the_legacy_table() -> None:
    assert set(PORT_COUNTERS) | set(RDMA_COUNTERS) | LEGACY_FILES == SYSFS_NAMES


def test_counters_db_fields_are_the_sai_names_the_reader_maps() -> None:
    assert {stat for _, stats in PORT_STATS for stat in stats} == COUNTERS_DB_FIELDS


@pytest.mark.parametrize("path", ETHTOOL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_ethtool_filtered_is_the_same_lines_and_the_same_port(path: Path) -> None:
    raw = path.read_text()
    kept = filter_output("ethtool@rail0", raw)
    lines = raw.splitlines()
    kept_lines = kept.splitlines()
    it = iter(lines)
    assert all(line in it for line in kept_lines)  # a subsequence: same lines, same order
    assert kept_lines[0] == lines[0] or lines[0].strip() != "NIC statistics:"
    whole, cut = parse_mlx5_ethtool(raw, port="rail0"), parse_mlx5_ethtool(kept, port="rail0")
    assert cut.ports == whole.ports and cut.ports
    if path.parent.name == "mlx5-connectx4-kernel-4.15":  # hundreds of per-channel lines are dropped
        assert len(kept_lines) < len(lines) / 10


def test_ethtool_messages_are_kept() -> None:
    raw = "Cannot get stats strings information: Operation not supported\n"
    assert filter_output("ethtool@rail0", raw) == raw


@pytest.mark.parametrize("path", SYSFS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sysfs_filtered_reads_the_same_ports(path: Path) -> None:
    raw = path.read_text()
    kept = filter_output("ib-counters", raw)
    it = iter(raw.splitlines())
    assert all(line in it for line in kept.splitlines())
    whole, cut = parse_ib_sysfs_counters(raw), parse_ib_sysfs_counters(kept)
    assert cut.ports == whole.ports and cut.unknown == whole.unknown


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: p.name)
def test_counters_db_filtered_keeps_the_port_counters(path: Path) -> None:
    raw = path.read_text()
    kept = filter_output("counters-db", raw)
    doc = json.loads(kept)
    assert set(doc) <= set(json.loads(raw)) and "COUNTERS_QUEUE_NAME_MAP" not in doc
    whole, cut = parse_counters_db(raw), parse_counters_db(kept)
    if "COUNTERS_PORT_NAME_MAP" not in json.loads(raw):  # keyed by port name (gNMI): not a dump, left as it is
        assert kept == raw
        return
    assert list(cut.ports) == list(whole.ports)
    for port, sample in whole.ports.items():
        port_counters = {k: v for k, v in sample.counters.items() if not k.startswith(("q", "pfcwd"))}
        assert cut.ports[port].counters == port_counters, port
    assert [u for u in cut.unknown] == [u for u in whole.unknown if "queue" not in u]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("counters-db", "not json {"),
        ("counters-db", '{"COUNTERS:oid:0x1": {}}'),
        ("pfcwd", "QUEUE  STATUS\n"),
        ("bgp-summary", "{}"),
        ("routes", '{"0.0.0.0/0": []}'),
    ],
)
def test_other_outputs_are_left_as_printed(name: str, text: str) -> None:
    assert filter_output(name, text) is text


BGP = sorted((FIX / "telemetry" / "frr").glob("*bgp*summary*.json"))


def _peers(doc: object) -> list[dict]:
    """Every peer object of a summary document (families, VRFs of families)."""
    if not isinstance(doc, dict):
        return []
    if isinstance(doc.get("peers"), dict):
        return [p for p in doc["peers"].values() if isinstance(p, dict)]
    return [p for v in doc.values() for p in _peers(v)]


@pytest.mark.parametrize("path", BGP, ids=lambda p: p.name)
def test_bgp_summary_filtered_reads_the_same(path: Path) -> None:
    """The reader reads the same peers, states, counters and reasons from the filtered summary, which holds only
    the kept fields of each peer; and the fields it drops are ones the reader never reads: junk in them changes
    nothing (junk in a field it reads would be a reason)."""
    raw = path.read_text()
    kept = filter_output("bgp-summary", raw)
    assert len(kept) < len(raw)
    assert all(set(p) <= BGP_PEER_FIELDS for p in _peers(json.loads(kept)))
    whole = parse_bgp_summary(raw, device="dev")
    assert parse_bgp_summary(kept, device="dev") == whole
    doc = json.loads(raw)
    dropped = {k for p in _peers(doc) for k in p} - BGP_PEER_FIELDS
    assert dropped  # every recorded FRR prints some (msgs queued, table version)
    for p in _peers(doc):
        p.update(dict.fromkeys(dropped & set(p), "junk"))
    assert parse_bgp_summary(json.dumps(doc), device="dev") == whole


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: p.name)
def test_counters_db_filtered_is_the_flat_layout(path: Path) -> None:
    doc = json.loads(filter_output("counters-db", path.read_text()))
    assert all(isinstance(v, dict) and not {"type", "value", "ttl", "expireat"} & set(v) for v in doc.values())
