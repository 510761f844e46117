"""The results document: written and read back unchanged; whatever does not read becomes a reason, never an
exception (a cut file, not JSON, another format, a flow with a wrong field)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hwaac.probe.model import (
    FORMAT,
    Flow,
    FlowResult,
    ProbeResults,
    RttStats,
    read_results,
    recent,
    write_atomic,
    write_results,
)

FLOW = Flow("gpu-su01-h01", "rail0", "172.16.0.1", "gpu-su02-h01", "172.16.2.1", 0, 31800, 31790)
GOOD = ProbeResults(
    "gpu-su01-h01",
    1_700_000_000.0,
    1_700_000_004.5,
    [
        FlowResult(
            FLOW,
            100,
            98,
            97,
            RttStats(41.0, 55.5, 180.2),
            ("172.16.0.0", "10.1.0.4", "10.1.2.9", "172.16.2.1"),
            True,
            0,
            [],
        ),
        FlowResult(
            Flow("gpu-su01-h01", "rail0", "172.16.0.1", "gpu-su02-h02", "172.16.2.3", 0, 31808, 31790),
            100,
            None,
            0,
            None,
            ("172.16.0.0", "*"),
            False,
            0,
            ["path incomplete: the destination did not answer"],
        ),
    ],
)


def text() -> str:
    return json.dumps(
        {
            "format": FORMAT,
            "host": GOOD.host,
            "started": GOOD.started,
            "ended": GOOD.ended,
            "flows": [_raw(r) for r in GOOD.flows],
        }
    )


def _raw(r: FlowResult) -> dict:
    f = r.flow
    return {
        "flow": {
            "src_host": f.src_host,
            "src_if": f.src_if,
            "src_ip": f.src_ip,
            "dst_host": f.dst_host,
            "dst_ip": f.dst_ip,
            "rail": f.rail,
            "sport": f.sport,
            "dport": f.dport,
        },
        "sent": r.sent,
        "received_forward": r.received_forward,
        "received_back": r.received_back,
        "rtt_us": None if r.rtt_us is None else {"min": r.rtt_us.min, "p50": r.rtt_us.p50, "p99": r.rtt_us.p99},
        "path": None if r.path is None else list(r.path),
        "path_complete": r.path_complete,
        "host_drops": r.host_drops,
        "errors": r.errors,
    }


def test_written_and_read_back(tmp_path: Path) -> None:
    write_results(tmp_path / "probe.json", GOOD)
    got = read_results((tmp_path / "probe.json").read_text())
    assert got == GOOD and not got.unknown
    assert read_results(text()) == GOOD
    assert [p.name for p in tmp_path.iterdir()] == ["probe.json"]  # no temporary file left


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "probe.json").mkdir()  # the rename over a folder fails after the temporary file was written
    with pytest.raises(OSError):
        write_atomic(tmp_path / "probe.json", text())
    assert [p.name for p in tmp_path.iterdir()] == ["probe.json"] and (tmp_path / "probe.json").is_dir()


def _edit_flow(key: str, value: object) -> str:
    doc = json.loads(text())
    doc["flows"][0][key] = value
    return json.dumps(doc)


# the document's text -> how many flows still read, a fragment of the reason
BAD = [
    ("cut file", text()[: len(text()) // 2], 0, "not JSON"),
    ("empty", "", 0, "not JSON"),
    ("binary", b"\xff\xfe\x00", 0, "not JSON"),
    ("a list", "[]", 0, "not a results object"),
    ("another format", text().replace(FORMAT, "hwaac-probe/9"), 0, "format 'hwaac-probe/9'"),
    ("no host", text().replace('"host": "gpu-su01-h01"', '"host": 3'), 0, "host is 3"),
    ("a time that is text", text().replace("1700000000.0", '"monday"'), 0, "started is 'monday'"),
    ("flows not a list", json.dumps({"format": FORMAT, "host": "h", "flows": {}}), 0, "flows is not a list"),
    ("a negative count", _edit_flow("sent", -1), 1, "flow 0: sent is -1"),
    ("a count that is true", _edit_flow("received_back", True), 1, "flow 0: received_back is True"),
    ("a path of numbers", _edit_flow("path", [1, 2]), 1, "flow 0: path is not a list"),
    ("rtt not numbers", _edit_flow("rtt_us", {"min": "a"}), 1, "flow 0: rtt_us"),
    ("a flow without ports", _edit_flow("flow", {"src_host": "x"}), 1, "flow 0:"),
]


@pytest.mark.parametrize(("raw", "flows", "reason"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_what_does_not_read_is_a_reason(raw: str | bytes, flows: int, reason: str) -> None:
    got = read_results(raw, where="DIR/h/probe.json")
    assert len(got.flows) == flows
    assert got.unknown and all(u.startswith("DIR/h/probe.json: ") for u in got.unknown)
    assert reason in " ".join(got.unknown)


def test_a_forward_count_above_sent_is_not_trusted() -> None:
    got = read_results(_edit_flow("received_forward", 101))
    assert got.flows[0].received_forward is None and "not trusted" in got.flows[0].errors[-1]


# GOOD ended at 1_700_000_004.5; (read at, max age) -> judged, or a fragment of why not
AGES = [
    ("just written", 1_700_000_010.0, 900.0, None),
    ("at the limit", 1_700_000_904.5, 900.0, None),
    ("an hour old", 1_700_003_604.5, 900.0, "ended 3600 s before it was read, more than 900 s"),
]


@pytest.mark.parametrize(("read_at", "max_age", "why"), [a[1:] for a in AGES], ids=[a[0] for a in AGES])
def test_results_older_than_the_limit_are_not_judged(read_at: float, max_age: float, why: str | None) -> None:
    got = recent(GOOD, read_at, max_age, where="h probe")
    if why is None:
        assert got is GOOD
    else:
        assert (got.host, got.flows, got.started, got.ended) == (GOOD.host, [], None, None)
        assert got.unknown[-1].startswith("h probe: not judged, ") and why in got.unknown[-1]


def test_results_without_a_time_or_that_did_not_read() -> None:
    untimed = ProbeResults("h", None, None, list(GOOD.flows))
    assert "age is unknown" in recent(untimed, 1_700_000_010.0, 900.0).unknown[-1]
    broken = read_results("{", where="h probe")
    assert recent(broken, 1_700_000_010.0, 900.0) is broken  # its own reason stands
