"""Every SONiC QoS/DOM/COUNTERS_DB reader on bad input: empty, garbage, another tool's output, outputs cut in the
middle of a row, and every fixture cut at many points. A reader never raises, and what it could not read is a
reason in ``unknown``, never a port or value it made up."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hwaac.telemetry.model import Snapshot, canonical
from hwaac.telemetry.parsers.sonic_counters_db import parse_counters_db
from hwaac.telemetry.parsers.sonic_pfcstat import parse_pfc_counters
from hwaac.telemetry.parsers.sonic_pfcwd import parse_pfcwd_stats
from hwaac.telemetry.parsers.sonic_queuestat import parse_queue_counters
from hwaac.telemetry.parsers.sonic_transceiver import parse_transceiver_dom

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "telemetry"
Reader = Callable[..., Snapshot]
READERS: dict[str, Reader] = {
    "pfcstat": parse_pfc_counters,
    "pfcwd": parse_pfcwd_stats,
    "queuestat": parse_queue_counters,
    "sfpshow": parse_transceiver_dom,
    "counters-db": parse_counters_db,
}
FIXTURES = sorted(p for p in FIX.glob("*/*") if p.parent.name in READERS and p.name != "README.md")


def ids(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
@pytest.mark.parametrize("raw", ["", "\n\n", "garbage\x00\xff text", "{", "[1, 2]", "-----  -----\n", "{}", "null"])
def test_empty_and_garbage_are_unknown(reader: Reader, raw: str) -> None:
    snap = reader(raw)
    assert snap.unknown and snap.ports == {}


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
@pytest.mark.parametrize("raw", [None, b"bytes", 42])
def test_not_text_is_unknown(reader: Reader, raw: object) -> None:
    snap = reader(raw)
    assert snap.unknown and snap.ports == {}


# a fixture of each reader given to every other reader
SAMPLES = {
    "pfcstat": "pfcstat/sonic-utilities-691b1bb-all-na.txt",
    "pfcwd": "pfcwd/sonic-utilities-691b1bb-stats.txt",
    "queuestat": "queuestat/sonic-utilities-691b1bb-counters.txt",
    "queuestat-json": "queuestat/sonic-utilities-691b1bb-counters.json",
    "sfpshow": "sfpshow/sonic-utilities-691b1bb-dom-all.txt",
    "counters-db": "counters-db/sonic-utilities-b6af9f4-t1-dump-subset.json",
    "counters-db-text": "counters-db/sonic-db-cli-hgetall-t1_derived.txt",
}
OTHERS = [(reader, sample) for reader in READERS for sample in SAMPLES if not sample.startswith(reader)]


@pytest.mark.parametrize(("reader", "sample"), OTHERS, ids=[f"{r}<-{s}" for r, s in OTHERS])
def test_another_tools_output_is_unknown(reader: str, sample: str) -> None:
    snap = READERS[reader]((FIX / SAMPLES[sample]).read_text())
    assert snap.unknown and snap.ports == {}


# fixture, a line to cut in its middle (its first occurrence): the reading must say it is incomplete
CUTS = [
    ("pfcstat/sonic-utilities-691b1bb-all-na.txt", "Ethernet-BP4   1,800"),
    ("pfcstat/sonic-utilities-691b1bb-all-na.txt", "Ethernet-BP4   1,810"),
    ("pfcstat/sonic-utilities-691b1bb-history.txt", "Ethernet4        PFC3"),
    ("pfcwd/pr682-operational.txt", "Ethernet96:3"),
    ("pfcwd/sonic-utilities-691b1bb-stats.txt", "Ethernet8:4"),
    ("queuestat/sonic-utilities-691b1bb-counters.txt", "Ethernet4    UC5"),
    ("queuestat/sonic-utilities-d5f5382-counters.txt", "Ethernet8   MC12"),
    ("queuestat/sonic-utilities-691b1bb-counters.json", '"MC15"'),
    ("sfpshow/asternos-qsfp28-sr4.txt", "TX2Bias"),
    ("sfpshow/sonic-utilities-691b1bb-osfp-8lane.txt", "TX5Power"),
    ("counters-db/sonic-utilities-b6af9f4-t1-dump-subset.json", "SAI_PORT_STAT_IF_IN_DISCARDS"),
    ("counters-db/sonic-db-cli-hgetall-t1_derived.txt", "SAI_PORT_STAT_PFC_3_RX_PKTS"),
    ("counters-db/issue8314-msn4600c-name-map-tty-cut.txt", "Ethernet16"),
]


@pytest.mark.parametrize(("name", "line"), CUTS)
def test_a_cut_in_the_middle_of_a_row_is_unknown(name: str, line: str) -> None:
    text = (FIX / name).read_text()
    start = text.index(line)
    end = text.index("\n", start)
    snap = READERS[name.split("/")[0]](text[: (start + end) // 2])
    assert snap.unknown
    assert all(canonical(c) for p in snap.ports.values() for c in [*p.counters, *p.gauges])


@pytest.mark.parametrize("path", FIXTURES, ids=ids)
def test_never_raises_on_any_prefix(path: Path) -> None:
    text = path.read_text()
    reader = READERS[path.parent.name]
    full = reader(text)
    for cut in {len(text) * k // 17 for k in range(17)}:
        snap = reader(text[:cut])
        assert isinstance(snap, Snapshot) and set(snap.ports) <= set(full.ports)
        line_end = text.rfind("\n", 0, cut) + 1  # cut at a line's end: whatever is read is what the whole says
        snap = reader(text[:line_end])
        for name, sample in snap.ports.items():
            whole = full.ports[name]
            assert {(k, v) for k, v in sample.counters.items() if v is not None} <= whole.counters.items()
            assert {(k, v) for k, v in sample.gauges.items() if v is not None} <= whole.gauges.items()


@pytest.mark.parametrize("path", FIXTURES, ids=ids)
def test_every_name_is_canonical(path: Path) -> None:
    snap = READERS[path.parent.name](path.read_text())
    assert snap.ports or snap.unknown
    assert all(canonical(c) for p in snap.ports.values() for c in [*p.counters, *p.gauges])
