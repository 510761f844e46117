"""Rates between snapshots: time bases, resets, wraps, clears, N/A and ports in one sample only."""

from __future__ import annotations

import pytest

from hwaac.telemetry.model import PortSample, Snapshot
from hwaac.telemetry.rates import ALL, CLEARED, RESET, WRAP, classify_fall, interval, rates

TOP32, TOP64 = 1 << 32, 1 << 64


def snap(
    counters: dict[str, int | None],
    *,
    at: float | None = None,
    port: str = "Ethernet0",
    state: dict[str, str] | None = None,
    tool: str = "portstat",
    device: str = "leaf1",
) -> Snapshot:
    s = Snapshot(tool, device=device, taken_at=at)
    s.ports[port] = PortSample(port, dict(counters), {}, dict(state or {}))
    return s


# counter: before, after, width (None: default 64) -> rate over 10 s, or the discontinuity kind and no rate
COUNTER_CASES = [
    ("rises", 100, 600, None, 50.0, None),
    ("unchanged", 7, 7, None, 0.0, None),
    ("reset to small", 5_000_000, 12, None, None, RESET),
    ("reset to zero", 1, 0, None, None, RESET),
    ("32-bit wrap", TOP32 - 100, 400, 32, None, WRAP),
    ("64-bit wrap", TOP64 - 10, 5, None, None, WRAP),
    ("32-bit fall on a 64-bit counter is a reset", TOP32 - 100, 400, None, None, RESET),
    ("32-bit counter falling from mid range", TOP32 // 2, 10, 32, None, RESET),
    ("value above the width is a reset", TOP32 + 5, 3, 32, None, RESET),
]


@pytest.mark.parametrize(
    ("case", "v0", "v1", "width", "rate", "kind"), COUNTER_CASES, ids=[c[0] for c in COUNTER_CASES]
)
def test_counter_rate(case: str, v0: int, v1: int, width: int | None, rate: float | None, kind: str | None) -> None:
    widths = {"rx_ok": width} if width else None
    iv = interval(snap({"rx_ok": v0}, at=100.0), snap({"rx_ok": v1}, at=110.0), widths=widths)
    assert iv.errors == [] and iv.seconds == 10.0 and iv.time_base == "taken_at"
    pr = iv.ports["Ethernet0"]
    assert pr.rates["rx_ok"] == rate
    if kind is None:
        assert iv.discontinuities == [] and "rx_ok" not in pr.why
    else:
        (d,) = iv.discontinuities
        assert (d.device, d.port, d.counter, d.kind, d.before, d.after) == ("leaf1", "Ethernet0", "rx_ok", kind, v0, v1)
        assert pr.why["rx_ok"].startswith(kind)


def test_wrap_detail_names_the_increase_across_it() -> None:
    kind, wrapped, detail = classify_fall(TOP32 - 100, 400, 32)
    assert (kind, wrapped) == (WRAP, 500) and "+500" in detail


def test_reset_on_a_64_bit_counter_says_a_32_bit_wrap_would_fit() -> None:
    assert "32-bit wrap" in classify_fall(TOP32 - 100, 400, 64)[2]


# before, after counters -> reason words of the None rate
NONE_CASES = [
    ("N/A later", {"rx_err": 5}, {"rx_err": None}, "later sample"),
    ("N/A earlier", {"rx_err": None}, {"rx_err": 5}, "earlier sample"),
    ("only later", {}, {"rx_err": 5}, "not in the earlier sample"),
    ("only earlier", {"rx_err": 5}, {}, "not in the later sample"),
]


@pytest.mark.parametrize(("case", "c0", "c1", "words"), NONE_CASES, ids=[c[0] for c in NONE_CASES])
def test_unreadable_counters_have_no_rate(case: str, c0: dict, c1: dict, words: str) -> None:
    iv = interval(snap(c0, at=0.0), snap(c1, at=5.0))
    pr = iv.ports["Ethernet0"]
    assert pr.rates["rx_err"] is None and words in pr.why["rx_err"]
    assert iv.discontinuities == []


# last_cleared before, after -> cleared?
CLEAR_CASES = [
    ("same clear time", "2024-05-01 10:00:00", "2024-05-01 10:00:00", False),
    ("cleared again", "2024-05-01 10:00:00", "2024-05-01 11:00:00", True),
    ("first clear", None, "2024-05-01 11:00:00", True),
    ("never cleared", None, None, False),
]


@pytest.mark.parametrize(("case", "lc0", "lc1", "cleared"), CLEAR_CASES, ids=[c[0] for c in CLEAR_CASES])
def test_sonic_clear_is_a_discontinuity_of_every_counter(
    case: str, lc0: str | None, lc1: str | None, cleared: bool
) -> None:
    st0 = {"last_cleared": lc0} if lc0 else {}
    st1 = {"last_cleared": lc1} if lc1 else {}
    # the counters rise, as they may after a clear too: only last_cleared tells
    iv = interval(
        snap({"rx_ok": 10, "tx_ok": 20}, at=0.0, state=st0), snap({"rx_ok": 30, "tx_ok": 60}, at=2.0, state=st1)
    )
    pr = iv.ports["Ethernet0"]
    if cleared:
        (d,) = iv.discontinuities
        assert (d.counter, d.kind, d.before, d.after) == (ALL, CLEARED, lc0, lc1)
        assert pr.rates == {"rx_ok": None, "tx_ok": None} and "cleared" in pr.why["tx_ok"]
    else:
        assert iv.discontinuities == [] and pr.rates == {"rx_ok": 10.0, "tx_ok": 20.0}


# taken_at before, after, caller times -> seconds, time base, error words
TIME_CASES = [
    ("taken_at", 100.0, 130.0, None, 30.0, "taken_at", None),
    ("taken_at wins over the caller", 100.0, 130.0, (0.0, 1.0), 30.0, "taken_at", None),
    ("caller when one lacks taken_at", 100.0, None, (10.0, 15.0), 5.0, "caller", None),
    ("caller when none has it", None, None, (10.0, 12.5), 2.5, "caller", None),
    ("no time at all", None, None, None, None, "", "no sample times"),
    ("same time", 100.0, 100.0, None, None, "taken_at", "the same"),
    ("earlier time", 100.0, 90.0, None, None, "taken_at", "earlier"),
    ("caller times backwards", None, None, (5.0, 4.0), None, "caller", "earlier"),
]


@pytest.mark.parametrize(
    ("case", "a0", "a1", "times", "seconds", "base", "error"), TIME_CASES, ids=[c[0] for c in TIME_CASES]
)
def test_time_base(
    case: str,
    a0: float | None,
    a1: float | None,
    times: tuple[float, float] | None,
    seconds: float | None,
    base: str,
    error: str | None,
) -> None:
    iv = interval(snap({"rx_ok": 0}, at=a0), snap({"rx_ok": 100}, at=a1), times=times)
    assert (iv.seconds, iv.time_base) == (seconds, base)
    pr = iv.ports["Ethernet0"]
    if error is None:
        assert iv.errors == [] and pr.rates["rx_ok"] == pytest.approx(100 / seconds)  # type: ignore[operator]
    else:
        assert any(error in e for e in iv.errors)
        assert pr.rates == {"rx_ok": None} and error in pr.why["rx_ok"]


@pytest.mark.parametrize(
    ("case", "kw0", "kw1", "words"),
    [
        ("device differs", {"device": "leaf1"}, {"device": "leaf2"}, "not the same device"),
        ("tool differs", {"tool": "portstat"}, {"tool": "portstat errors"}, "not the same tool"),
    ],
)
def test_samples_of_different_sources_give_no_rates(case: str, kw0: dict, kw1: dict, words: str) -> None:
    iv = interval(snap({"rx_ok": 1}, at=0.0, **kw0), snap({"rx_ok": 2}, at=1.0, **kw1))
    assert any(words in e for e in iv.errors) and iv.ports["Ethernet0"].rates == {"rx_ok": None}


def test_ports_in_one_sample_only_are_reported() -> None:
    a, b = Snapshot("portstat", "leaf1", 0.0), Snapshot("portstat", "leaf1", 1.0)
    a.port("Ethernet0").counters["rx_ok"] = 1
    a.port("Ethernet8").counters["rx_ok"] = 1
    b.port("Ethernet0").counters["rx_ok"] = 3
    b.port("Ethernet16").counters["rx_ok"] = 3
    iv = interval(a, b)
    assert iv.only_before == ["Ethernet8"] and iv.only_after == ["Ethernet16"]
    assert list(iv.ports) == ["Ethernet0"] and iv.ports["Ethernet0"].rates["rx_ok"] == 2.0


def test_gauges_and_state_are_the_later_samples_and_not_rated() -> None:
    a, b = snap({"rx_ok": 0}, at=0.0, state={"oper": "up"}), snap({"rx_ok": 1}, at=1.0, state={"oper": "down"})
    a.ports["Ethernet0"].gauges["pre_fec_ber"] = 1e-9
    b.ports["Ethernet0"].gauges["pre_fec_ber"] = 3e-8
    pr = interval(a, b).ports["Ethernet0"]
    assert pr.gauges == {"pre_fec_ber": 3e-8} and pr.state == {"oper": "down"} and "pre_fec_ber" not in pr.rates


def test_three_snapshots_give_two_intervals_each_with_its_own_discontinuity() -> None:
    s = [snap({"rx_ok": v}, at=t) for v, t in ((0, 0.0), (100, 10.0), (5, 20.0))]
    first, second = rates(s)
    assert first.ports["Ethernet0"].rates["rx_ok"] == 10.0 and first.discontinuities == []
    assert second.ports["Ethernet0"].rates["rx_ok"] is None and second.discontinuities[0].kind == RESET


@pytest.mark.parametrize(
    ("snaps", "times", "words"),
    [
        ([], None, "a rate needs two"),
        ([Snapshot("portstat")], None, "a rate needs two"),
        ([Snapshot("portstat"), Snapshot("portstat")], [1.0], "1 sample times for 2"),
    ],
)
def test_rates_of_too_few_snapshots_or_times(snaps: list, times: list | None, words: str) -> None:
    (iv,) = rates(snaps, times=times)
    assert any(words in e for e in iv.errors) and iv.ports == {}


def test_caller_times_per_snapshot() -> None:
    s = [snap({"rx_ok": v}) for v in (0, 30, 90)]
    a, b = rates(s, times=[0.0, 3.0, 9.0])
    assert (a.ports["Ethernet0"].rates["rx_ok"], b.ports["Ethernet0"].rates["rx_ok"]) == (10.0, 10.0)


def test_readers_problems_of_either_sample_are_kept() -> None:
    """A rated output read only in part says so: the later sample's reasons, then the earlier's, marked."""
    a, b = snap({"rx_ok": 0}, at=0.0), snap({"rx_ok": 10}, at=1.0)
    a.unknown.append("line 9: cut short")
    b.unknown.append("Ethernet8: RX_ERR 'x' is not a count")
    iv = interval(a, b)
    assert iv.unknown == ["Ethernet8: RX_ERR 'x' is not a count", "earlier sample: line 9: cut short"]
    assert iv.errors == [] and iv.ports["Ethernet0"].rates == {"rx_ok": 10.0}
    assert interval(snap({"rx_ok": 0}, at=0.0), snap({"rx_ok": 1}, at=1.0)).unknown == []
