"""Each reader's and the rate layer's fast path against its general loop on recorded outputs: with the fast path
turned off (monkeypatched to decline) the result must be the same, dict order and reasons included, and on the
usual outputs the fast path must actually be taken (docs/network-health-scale.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hwaac.health.parsers import ethtool, ib_counters, rdma
from hwaac.telemetry import rates
from hwaac.telemetry.model import Snapshot
from hwaac.telemetry.parsers import host_rdma, json_text, sonic_intf_status, sonic_sai_stats
from hwaac.telemetry.parsers.frr_bgp import parse_bgp_summary
from hwaac.telemetry.parsers.frr_routes import parse_routes
from hwaac.telemetry.parsers.host_ethtool import TABLE, parse_mlx5_ethtool
from hwaac.telemetry.parsers.sonic_counters_db import parse_counters_db
from hwaac.telemetry.parsers.sonic_intf_status import parse_interface_status
from hwaac.telemetry.parsers.sonic_portstat import parse_portstat
from hwaac.telemetry.tools import filter_output

FIX = Path(__file__).parents[2] / "fixtures"
HEALTH, TELEMETRY = FIX / "health", FIX / "telemetry"
ETHTOOL = sorted((HEALTH / "ethtool").glob("*/*.txt"))
SYSFS = sorted(p for p in (HEALTH / "ib-counters").glob("*/*.txt") if p.name != "recorded.txt")
STAT = sorted((HEALTH / "rdma-statistic").glob("*.txt"))
COUNTERS_DB = sorted(p for p in (TELEMETRY / "counters-db").iterdir() if p.suffix in (".json", ".txt"))
STATUS = sorted((TELEMETRY / "sonic-interfaces-status").glob("*.txt"))


def _dump(value: Any) -> Any:
    """A reading with every dict as a list of items, so that equal means the same order too."""
    if isinstance(value, dict):
        return [(k, _dump(v)) for k, v in value.items()]
    if isinstance(value, list | tuple):
        return [_dump(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return (type(value).__name__, [(f, _dump(getattr(value, f))) for f in value.__dataclass_fields__])
    return value


def _both(
    monkeypatch: pytest.MonkeyPatch, owner: object, name: str, declined: Any, read: Callable[[], Any]
) -> tuple[Any, Any, int]:
    """(read with the fast path, read with it declining, how often it was taken)."""
    fast = getattr(owner, name)
    taken = 0

    def counting(*args: Any) -> Any:
        nonlocal taken
        out = fast(*args)
        taken += out is not declined and out is not None
        return out

    monkeypatch.setattr(owner, name, counting)
    with_fast = _dump(read())
    monkeypatch.setattr(owner, name, lambda *args: declined)
    return with_fast, _dump(read()), taken


def _variants(paths: list[Path], tool: str) -> list[tuple[str, str]]:
    """Each recorded output as recorded and as the host module's filter returns it."""
    out = []
    for p in paths:
        raw = p.read_text()
        out += [(f"{p.parent.name}/{p.name}", raw), (f"{p.parent.name}/{p.name} filtered", filter_output(tool, raw))]
    return out


@pytest.mark.parametrize(("name", "raw"), _variants(ETHTOOL, "ethtool"))
def test_ethtool_fast_path_reads_as_the_line_loop(name: str, raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow, taken = _both(monkeypatch, ethtool, "_all_counts", None, lambda: ethtool.parse_ethtool_stats(raw))
    assert fast == slow and taken == 1


@pytest.mark.parametrize(("name", "raw"), _variants(SYSFS, "ib-counters"))
def test_sysfs_fast_path_reads_as_the_line_loop(name: str, raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow, taken = _both(
        monkeypatch, ib_counters, "_read_plain", False, lambda: ib_counters.parse_ib_counters(raw)
    )
    assert fast == slow
    if "procfs" in name or "cx4lx" in name:  # plain lines, nothing saturated or unreadable
        assert taken == 1


@pytest.mark.parametrize(("name", "raw"), _variants(STAT, "rdma-statistic"))
def test_rdma_statistic_fast_path_reads_as_pair_by_pair(name: str, raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow, taken = _both(monkeypatch, rdma, "_set_counts", False, lambda: rdma.parse_rdma_statistic(raw))
    assert fast == slow
    assert taken > 0 or "pretty" in name  # -p prints one pair a line: no link line holds the counters


@pytest.mark.parametrize(("name", "raw"), _variants(COUNTERS_DB, "counters-db"))
def test_counters_db_fast_path_reads_as_the_field_loop(name: str, raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow, taken = _both(monkeypatch, sonic_sai_stats, "_read_port_fast", False, lambda: parse_counters_db(raw))
    assert fast == slow
    if name.startswith(("sonic-utilities", "grpc")):
        assert taken > 0


@pytest.mark.parametrize("path", STATUS, ids=lambda p: p.name)
def test_interface_status_fast_rows_read_as_word_by_word(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = path.read_text()
    fast, slow, taken = _both(monkeypatch, sonic_intf_status, "_row_state", None, lambda: parse_interface_status(raw))
    assert fast == slow
    assert taken > 0 or "oper_na" in path.name  # every row of that one has Oper N/A: word by word, with reasons


@pytest.mark.parametrize(
    ("table", "path"),
    [(TABLE, p) for p in ETHTOOL]
    + [(host_rdma.RDMA_COUNTERS, p) for p in STAT]
    + [(host_rdma.PORT_COUNTERS, p) for p in SYSFS],
)
def test_cached_name_choice_is_the_loop_s(table: host_rdma.Table, path: Path) -> None:
    if path.parent.parent.name == "ethtool":
        readings = [ethtool.parse_ethtool_stats(path.read_text()).counters]
    elif path.parent.name == "rdma-statistic":
        readings = list(rdma.parse_rdma_statistic(path.read_text()).ports.values())
    else:
        readings = list(ib_counters.parse_ib_counters(path.read_text()).ports.values())
    for values in readings:
        cached: dict[str, int | None] = {}
        loop: dict[str, int | None] = {}
        assert host_rdma.map_counters(values, table, cached) == host_rdma._map_loop(values, table, loop)
        assert list(cached.items()) == list(loop.items())


def _advanced(snap: Snapshot, by: int) -> Snapshot:
    """``snap`` with every readable counter ``by`` higher (a later reading of the same ports)."""
    out = Snapshot(snap.tool, snap.device, snap.taken_at, snap.version)
    for name, s in snap.ports.items():
        p = out.port(name)
        p.counters = {k: None if v is None else v + by for k, v in s.counters.items()}
        p.gauges, p.state = dict(s.gauges), dict(s.state)
    return out


def _pairs() -> list[tuple[str, Snapshot, Snapshot]]:
    samples = TELEMETRY / "samples" / "cable-fault"
    leaf = "leaf-p0-su01-r0/portstat.txt"
    stat = HEALTH / "rdma-statistic"
    db = parse_counters_db((TELEMETRY / "counters-db" / "sonic-utilities-691b1bb-mock-tables-subset.json").read_text())
    return [
        (
            "portstat recorded sweeps",
            parse_portstat((samples / "sweep1" / leaf).read_text()),
            parse_portstat((samples / "sweep2" / leaf).read_text()),
        ),
        (
            "rdma 4link and its derived later reading",
            host_rdma.parse_rdma_statistic((stat / "mlnx-iproute2-4link.txt").read_text()),
            host_rdma.parse_rdma_statistic((stat / "mlnx-iproute2-4link-after_derived.txt").read_text()),
        ),
        ("COUNTERS_DB advanced by 7", db, _advanced(db, 7)),
        ("COUNTERS_DB fallen by 7", _advanced(db, 7), db),
        (
            "ethtool advanced by 1000",
            parse_mlx5_ethtool(ETHTOOL[-1].read_text(), port="rail0"),
            _advanced(parse_mlx5_ethtool(ETHTOOL[-1].read_text(), port="rail0"), 1000),
        ),
    ]


@pytest.mark.parametrize(("name", "before", "after"), _pairs(), ids=[p[0] for p in _pairs()])
def test_rates_fast_path_rates_as_counter_by_counter(
    name: str, before: Snapshot, after: Snapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow, taken = _both(
        monkeypatch, rates, "_all_rated", None, lambda: rates.interval(before, after, times=(100.0, 130.0))
    )
    assert fast == slow
    assert (taken > 0) == ("fallen" not in name)


FRR = sorted((TELEMETRY / "frr").glob("*.json"))


@pytest.mark.parametrize("path", [*COUNTERS_DB, *FRR], ids=lambda p: p.name)
def test_orjson_decodes_as_the_standard_library(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = path.read_text()
    if path.parent.name == "frr":
        read: Callable[[], Any] = (
            (lambda: parse_routes(raw)) if "route" in path.name else (lambda: parse_bgp_summary(raw))
        )
    else:
        read = lambda: parse_counters_db(raw)  # noqa: E731
    fast = _dump(read())
    monkeypatch.setattr(json_text, "loads", json.loads)
    assert _dump(read()) == fast


@pytest.mark.parametrize(
    "text",
    [
        '{"a": NaN, "b": Infinity}',
        '{"n": 123456789012345678901234567890}',
        '{"n": -9223372036854775809}',
        '{"n": 18446744073709551616}',
        '{"x": 1e400}',
        '{"s": "\\ud800"}',
        '{"a": [1, 2',
        "[1, 2] trailing",
    ],
)
def test_what_orjson_refuses_decodes_or_fails_as_before(text: str) -> None:
    try:
        expected: Any = json.loads(text)
    except ValueError as exc:
        with pytest.raises(type(exc)) as got:
            json_text.loads(text)
        assert str(got.value) == str(exc)
        return
    got = json_text.loads(text)
    assert repr(got) == repr(expected)
