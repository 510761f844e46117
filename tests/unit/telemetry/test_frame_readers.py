"""Frame readers (beside each parser) against their parsers, on every recorded fixture of each format and the scale
benchmark's synthetic outputs, filtered and whole: a frame, when there is one, is the parser's snapshot
(frame_to_snapshot, dict order included), and a frame is None exactly where that snapshot is not plain (frame_of).
Hand-made cases: tests/unit/telemetry/test_frame_readers_cases.py (switch formats) and
test_frame_readers_host_cases.py (ethtool, ib counters)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.network_sweep import Synth
from benchmarks.plan_scale import scale_intent
from hwaac.plan import build_plan
from hwaac.telemetry import samples
from hwaac.telemetry.frames import Frame, frame_of, frame_to_snapshot
from hwaac.telemetry.model import END_STATE_WORDS, Snapshot
from hwaac.telemetry.parsers import host_ethtool
from hwaac.telemetry.parsers.frr_bgp import parse_bgp_summary
from hwaac.telemetry.parsers.frr_bgp_frame import read_bgp_summary_frame
from hwaac.telemetry.parsers.host_ethtool import parse_mlx5_ethtool, read_mlx5_ethtool_frame
from hwaac.telemetry.parsers.host_rdma import parse_ib_sysfs_counters, read_ib_sysfs_frame
from hwaac.telemetry.parsers.sonic_counters_db import parse_counters_db, read_counters_db_frame
from hwaac.telemetry.parsers.sonic_intf_status import parse_interface_status, read_interface_status_frame
from hwaac.telemetry.tools import filter_output
from tests.unit.telemetry.test_frames import dump

FIX = Path(__file__).parents[2] / "fixtures"
Read = Callable[[str], Any]
# format -> (parser to a snapshot, frame reader), each as the sweep reader calls it for device "dev" (port "rail0")
FORMATS: dict[str, tuple[Read, Read]] = {
    "counters-db": (
        lambda raw: parse_counters_db(raw, device="dev"),
        lambda raw: read_counters_db_frame(raw, device="dev"),
    ),
    "ethtool": (
        lambda raw: parse_mlx5_ethtool(raw, port="rail0", device="dev", version="5.15"),
        lambda raw: read_mlx5_ethtool_frame(raw, port="rail0", device="dev", version="5.15"),
    ),
    "ib-counters": (
        lambda raw: parse_ib_sysfs_counters(raw, device="dev"),
        lambda raw: read_ib_sysfs_frame(raw, device="dev"),
    ),
    "bgp-summary": (
        lambda raw: parse_bgp_summary(raw, device="dev", version="7.2").snapshot(),
        lambda raw: read_bgp_summary_frame(raw, device="dev", version="7.2"),
    ),
    "intf-status": (
        lambda raw: parse_interface_status(raw, device="dev", version="202305"),
        lambda raw: read_interface_status_frame(raw, device="dev", version="202305"),
    ),
    # as the sweep reader reads it: the words a link end keeps
    "intf-status judged": (
        lambda raw: _judged(parse_interface_status(raw, device="dev", version="202305")),
        lambda raw: read_interface_status_frame(raw, device="dev", version="202305", keys=END_STATE_WORDS),
    ),
}


def _judged(snap: Snapshot) -> Snapshot:
    for sample in snap.ports.values():
        sample.state = {k: w for k, w in sample.state.items() if k in END_STATE_WORDS}
    return snap


def check(fmt: str, raw: str, *, usual: bool = True) -> Frame | None:
    """Read ``raw`` both ways and check the frame against the snapshot; ``usual``: the frame is None exactly where
    the snapshot is not plain; else ``raw`` is a plain form the frame reader leaves to the parser."""
    parse, read = FORMATS[fmt]
    snap = parse(raw)
    frame, again = read(raw), read(raw)  # the second from the layouts the first learnt
    if fmt in samples.UTF8_FRAMES:  # the sweep reader gives these the file's bytes
        assert read(raw.encode()) == frame
    plain = frame_of(snap)
    if frame is not None:
        assert dump(frame_to_snapshot(frame)) == dump(snap)
        assert frame == plain and again == frame
        assert frame.values.dtype == np.uint64 and frame.values.shape == (len(frame.ports), len(frame.names))
    assert again is None if frame is None else again is not None
    if usual:
        assert (frame is None) == (plain is None)
    else:
        assert frame is None and plain is not None
    return frame


def _recorded(fmt: str, paths: list[Path]) -> list[Any]:
    out = []
    for p in paths:
        raw = p.read_text()
        out.append(pytest.param(fmt, raw, id=f"{p.parent.name}/{p.name}"))
        if fmt in ("counters-db", "ethtool", "ib-counters"):
            out.append(pytest.param(fmt, filter_output(fmt, raw), id=f"{p.parent.name}/{p.name} filtered"))
    return out


RECORDED = [
    *_recorded(
        "counters-db", sorted(p for p in (FIX / "telemetry" / "counters-db").iterdir() if p.suffix in (".json", ".txt"))
    ),
    *_recorded("ethtool", sorted((FIX / "health" / "ethtool").glob("*/*.txt"))),
    *_recorded("ib-counters", sorted((FIX / "health" / "ib-counters").glob("*/*.txt"))),
    *_recorded("bgp-summary", sorted((FIX / "telemetry" / "frr").glob("*bgp*summary*.json"))),
    *_recorded("intf-status", sorted((FIX / "telemetry" / "sonic-interfaces-status").glob("*.txt"))),
    *_recorded("intf-status judged", sorted((FIX / "telemetry" / "sonic-interfaces-status").glob("*.txt"))),
]


@pytest.mark.parametrize("fmt", sorted(samples.UTF8_FRAMES))
@pytest.mark.parametrize("encoding", ["utf-16", "utf-32", "latin-1"])
def test_json_bytes_in_another_encoding_are_left_to_the_parser(fmt: str, encoding: str) -> None:
    """The standard library guesses UTF-16 and UTF-32 JSON; the sweep reader decodes every file as UTF-8, so the
    frame reader leaves such bytes (and Latin-1 beyond ASCII) to the parser, which reads the text as decoded."""
    raw = next(p.values[1] for p in RECORDED if p.values[0] == fmt)
    data = raw.replace('"', '"\u00e9', 1).encode(encoding) if encoding == "latin-1" else raw.encode(encoding)
    assert FORMATS[fmt][1](data) is None


@pytest.mark.parametrize(("fmt", "raw"), RECORDED)
def test_recorded_output_reads_as_its_parser(fmt: str, raw: str) -> None:
    check(fmt, raw)


def test_every_format_has_recorded_outputs_with_a_frame() -> None:
    """The comparison above is no proof for a format of which no recorded output gives a frame."""
    assert {p.values[0] for p in RECORDED if check(p.values[0], p.values[1]) is not None} == set(FORMATS)


@pytest.fixture(scope="module")
def synthetic() -> dict[str, list[tuple[str, str, str]]]:
    """Per format, (what, raw) of the scale benchmark's outputs of a 512-GPU fabric: a leaf, a spine, a super-spine
    and a GPU node, both sweeps, as network_health.py writes them (filtered) and as the commands print them."""
    plan = build_plan(scale_intent(2))
    out: dict[str, list[tuple[str, str, str]]] = {fmt: [] for fmt in FORMATS}
    for filtered in (True, False):
        synth = Synth(plan, filtered=filtered, route_count=1)
        for role, device in synth.one_per_role().items():
            for sweep in (0, 1):
                for stem, raw in synth.outputs(device, sweep).items():
                    tool, _, port = stem.partition("@")
                    if tool in out:
                        out[tool].append(
                            (
                                f"{role} {stem} sweep{sweep + 1} {'filtered' if filtered else 'raw'}",
                                port,
                                filter_output(stem, raw) if filtered else raw,
                            )
                        )
    return out


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_synthetic_outputs_read_as_their_parser(fmt: str, synthetic: dict[str, list[tuple[str, str, str]]]) -> None:
    outputs = synthetic[fmt.split()[0]]
    assert len(outputs) == {"ethtool": 32, "ib-counters": 4}.get(fmt, 12)  # 8 rails; a GPU node; 3 switches
    for _what, port, raw in outputs:
        if port in ("", "rail0"):
            assert check(fmt, raw) is not None  # every one plain: each has its frame


def test_a_gpu_node_s_ethtool_outputs_read_together_as_one_by_one(
    synthetic: dict[str, list[tuple[str, str, str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    hosts: dict[str, list[tuple[str, str]]] = {}
    for what, port, raw in synthetic["ethtool"]:
        hosts.setdefault(what.split(" ", 2)[2], []).append((port, raw))  # by sweep and form
    assert len(hosts) == 4 and all(len(outputs) == 8 for outputs in hosts.values())
    alone = {
        k: [host_ethtool.read_mlx5_ethtool_frame(raw, port=port, device="dev") for port, raw in outputs]
        for k, outputs in hosts.items()
    }
    monkeypatch.setattr(host_ethtool, "read_mlx5_ethtool_frame", None)  # read together, or fail
    for k, outputs in hosts.items():
        together = host_ethtool.read_mlx5_ethtool_frames(outputs, device="dev")
        assert together == alone[k] and None not in together
        stack = host_ethtool.read_mlx5_ethtool_stack(outputs, device="dev")  # the same, as one frame
        assert stack is not None and stack.ports == [port for port, _ in outputs]
        assert all(stack.names == f.names for f in together if f is not None)
        assert np.array_equal(stack.values, np.vstack([f.values for f in together if f is not None]))
