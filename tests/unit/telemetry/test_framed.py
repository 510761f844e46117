"""Outputs read into frames, rated in one pass and correlated on the reader processes judge as the same outputs read
into snapshots, rated port by port and correlated here: on a synthetic two-SU fabric with a CRC cable, a flapping link
and a link down (``benchmarks/network_sweep.py``), and through every case where a frame cannot be rated in one pass.

Each format's frame reader is tested against its parser beside it (test_frame_readers); this tests the rating
and correlation of frames."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from hwaac.plan import Plan, build_plan
from hwaac.telemetry import parallel, rated, samples
from hwaac.telemetry.fabric_health import FabricHealth, judge
from hwaac.telemetry.framed import RatedFrame, rate_frames
from hwaac.telemetry.frames import Frame, frame_to_snapshot
from hwaac.telemetry.rates import interval
from hwaac.telemetry.slo import default_slos
from hwaac.telemetry.topology import LinkIndex

REPO = Path(__file__).parents[3]
sys.path.insert(0, str(REPO / "benchmarks"))
from network_sweep import SECONDS, T0, Synth  # noqa: E402
from plan_scale import scale_intent  # noqa: E402

framed_reads: list[str] = []  # the tools whose outputs were read into frames


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch) -> None:
    """The frame readers, each noting when it read an output into a frame."""

    def spy(tool: str, read: Callable[..., Frame | None]) -> Callable[..., Frame | None]:
        def reader(raw: str, **kw: str) -> Frame | None:
            frame = read(raw, **kw)
            if frame is not None and tool not in framed_reads:
                framed_reads.append(tool)
            return frame

        return reader

    monkeypatch.setattr(samples, "FRAME_READERS", {t: spy(t, r) for t, r in samples.FRAME_READERS.items()})
    stacked = samples.read_mlx5_ethtool_stack  # a node's ethtool -S outputs, read together as one frame

    def stack(outputs: list[tuple[str, str]], **kw: str) -> Frame | None:
        frame = stacked(outputs, **kw)
        if frame is not None and "ethtool" not in framed_reads:
            framed_reads.append("ethtool")
        return frame

    monkeypatch.setattr(samples, "read_mlx5_ethtool_stack", stack)


@pytest.fixture(scope="module")
def fabric(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Plan, list[Path]]]:
    plan = build_plan(scale_intent(2))
    synth = Synth(plan, route_count=1, filtered=True)
    root = tmp_path_factory.mktemp("sweeps")
    folders = []
    for sweep in (0, 1):
        folder = root / f"sweep{sweep + 1}"
        for device in synth.devices():
            (folder / device).mkdir(parents=True)
            for stem, text in synth.outputs(device, sweep).items():
                (folder / device / f"{stem}.txt").write_text(text)
        (folder / "taken_at").write_text(f"{T0 + sweep * SECONDS}\n")
        folders.append(folder)
    yield plan, folders


def _assess(plan: Plan, folders: list[Path], index: LinkIndex | None, workers: int) -> FabricHealth:
    got = rated.read_rated(folders, workers=workers, index=index)
    return judge(plan, got, default_slos(), index=index)


@pytest.mark.usefixtures("spied")
@pytest.mark.parametrize("workers", [1, 2])
def test_frames_judge_as_snapshots(
    fabric: tuple[Plan, list[Path]], workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan, folders = fabric
    monkeypatch.setattr(parallel, "PARALLEL_DEVICES", 1)
    index = LinkIndex(plan)
    objects = _assess(plan, folders, None, 1)
    framed = _assess(plan, folders, index, workers)
    assert [s.rule for s in objects.report.suspects][:3] and framed.report.to_dict() == objects.report.to_dict()
    assert list(framed.corr.ends) == list(objects.corr.ends)
    assert [framed.corr.ends.interval_seconds(c) for c in range(len(index.links) * 2)] == [
        objects.corr.ends.interval_seconds(c) for c in range(len(index.links) * 2)
    ]
    assert list(framed.bgp) == list(objects.bgp)
    assert all(framed.bgp[d].ports == objects.bgp[d].ports for d in objects.bgp)
    assert all(isinstance(iv, RatedFrame) for iv in framed.bgp.values())  # the frames were rated, not parsed again
    framed_reads.clear()
    rated.read_rated(folders, workers=1, index=index)
    assert set(framed_reads) == {"counters-db", "ib-counters", "ethtool", "intf-status", samples.BGP}  # not snapshots


def _frames(
    c0: list[int],
    c1: list[int],
    *,
    ports: tuple[list[str], list[str]] = (["E0", "E4"], ["E0", "E4"]),
    names: tuple[tuple[str, ...], tuple[str, ...]] = (("rx_ok", "rx_err"), ("rx_ok", "rx_err")),
    at: tuple[float | None, float | None] = (0.0, 10.0),
    tools: tuple[str, str] = ("t", "t"),
    cleared: tuple[str, str] | None = None,
) -> tuple[Frame, Frame]:
    out = []
    for side, (values, p, n, t, tool) in enumerate(zip((c0, c1), ports, names, at, tools, strict=True)):
        state = [{"last_cleared": cleared[side]} for _ in p] if cleared else None
        arr = np.array([values] * len(p), dtype=np.uint64).reshape(len(p), len(n))
        out.append(Frame(tool, "leaf1", t, "", list(p), n, arr, state))
    return out[0], out[1]


# case -> frames; each is left to interval(), which reports why
NOT_ONE_PASS = [
    ("a counter fell", _frames([5, 1], [4, 1])),
    ("another port", _frames([1, 1], [2, 2], ports=(["E0", "E4"], ["E0", "E8"]))),
    ("ports in another order", _frames([1, 1], [2, 2], ports=(["E0", "E4"], ["E4", "E0"]))),
    ("other counters", _frames([1, 1], [2, 2], names=(("rx_ok", "rx_err"), ("rx_ok", "tx_ok")))),
    ("the same time", _frames([1, 1], [2, 2], at=(10.0, 10.0))),
    ("no time", _frames([1, 1], [2, 2], at=(None, 10.0))),
    ("another tool", _frames([1, 1], [2, 2], tools=("t", "u"))),
    ("counters cleared", _frames([1, 1], [2, 2], cleared=("never", "2024-01-01"))),
]


@pytest.mark.parametrize(("case", "pair"), NOT_ONE_PASS, ids=[c[0] for c in NOT_ONE_PASS])
def test_only_the_usual_interval_is_rated_in_one_pass(case: str, pair: tuple[Frame, Frame]) -> None:
    assert rate_frames(*pair) is None


def test_one_pass_gives_the_rates_of_interval() -> None:
    big = 2**63 + 12345  # past float precision: the difference is taken in integers first
    before, after = _frames([big, 7], [big + 3000, 7])
    fast = rate_frames(before, after)
    assert fast is not None and fast.seconds == 10.0 and fast.rows == ["E0", "E4"]
    slow = interval(frame_to_snapshot(before), frame_to_snapshot(after))
    assert fast.ports == slow.ports and fast.ports["E0"].rates == {"rx_ok": 300.0, "rx_err": 0.0}
    assert fast.start == slow.start and fast.end == slow.end and fast.time_base == slow.time_base == "taken_at"
    assert rate_frames(before, after, times=(100.0, 200.0)).seconds == 10.0  # type: ignore[union-attr]


def _port_sweeps(
    values: dict[str, tuple[int, int]], names: dict[str, tuple[str, ...]] | None = None
) -> list[samples.Sweep]:
    """Two sweeps of one GPU node's ``ethtool@PORT`` frames: port -> (rx_ok before, after)."""
    out = []
    for side in (0, 1):
        sweep = samples.Sweep(Path(f"s{side}"), 100.0 + 10 * side)
        for port, pair in values.items():
            n = (names or {}).get(port, ("rx_ok",))
            arr = np.array([[pair[side]] * len(n)], dtype=np.uint64)
            sweep.frames[("gpu1", f"ethtool@{port}")] = (
                Frame("ethtool -S", "gpu1", None, "", [port], n, arr, None),
                100.0 + 10 * side,
            )
        out.append(sweep)
    return out


def test_a_nodes_ports_are_rated_as_one_frame() -> None:
    got = rated.rate(_port_sweeps({"rail0": (1, 11), "rail1": (5, 25), "rail2": (0, 0)}))
    (frame,) = got.readings
    assert isinstance(frame, RatedFrame) and frame.rows == ["rail0", "rail1", "rail2"]
    assert frame.rates.tolist() == [[1.0], [2.0], [0.0]] and got.seconds == [10.0]


@pytest.mark.parametrize(
    ("case", "values", "names"),
    [
        ("a counter fell on one port", {"rail0": (1, 11), "rail1": (25, 5)}, None),
        ("other counters on one port", {"rail0": (1, 11), "rail1": (5, 25)}, {"rail1": ("tx_ok",)}),
    ],
)
def test_ports_not_rated_as_one_frame_are_rated_each(case: str, values: dict, names: dict | None) -> None:
    """Each port's reading is the one it has alone: a fall is reported on its port, the others are rated."""
    got = rated.rate(_port_sweeps(values, names))
    alone = [rated.rate(_port_sweeps({p: v}, names)).readings[0] for p, v in values.items()]
    assert [type(r).__name__ for r in got.readings] == [type(r).__name__ for r in alone]
    assert [r.ports for r in got.readings] == [r.ports for r in alone]


def test_a_nodes_ethtool_outputs_read_together_leave_the_odd_one_to_the_parser(tmp_path: Path) -> None:
    plain = "NIC statistics:\n     rx_packets_phy: 10\n     rx_crc_errors_phy: 0\n"
    (tmp_path / "gpu1").mkdir()
    (tmp_path / "gpu1" / "ethtool@rail0.txt").write_text(plain)
    (tmp_path / "gpu1" / "ethtool@rail1.txt").write_text(plain.replace(": 0", ": N/A"))
    (tmp_path / "gpu1" / "ethtool@rail2.txt").write_text(plain)
    sweep = samples.read_devices(samples.Sweep(tmp_path, 100.0), ["gpu1"], frames=True)
    assert sorted(stem for _, stem in sweep.frames) == ["ethtool@rail0", "ethtool@rail2"]
    snap, _ = sweep.snapshots[("gpu1", "ethtool@rail1")]
    assert snap.ports["rail1"].counters["rx_crc"] is None  # read by the parser, N/A as unreadable
    frame, _ = sweep.frames[("gpu1", "ethtool@rail2")]
    assert frame_to_snapshot(frame) == samples.PORT_READERS["ethtool"][0](plain, port="rail2", device="gpu1")


def _append(path: Path, line: str) -> None:
    path.write_text(path.read_text() + line)


# a GPU node's ethtool outputs that are not rated as one frame of its ports: (what, edit of the copied sweeps)
UNSTACKED = [
    (
        "one port's output of one sweep read port by port",
        lambda s1, s2, node: _append(s2 / node / "ethtool@rail3.txt", "     rx_vport_unicast_packets: 7\n"),
    ),
    (
        "a counter more on every port in the later sweep",
        lambda s1, s2, node: [
            _append(p, "     rx_prio3_pause: 7\n") for p in sorted((s2 / node).glob("ethtool@*.txt"))
        ],
    ),
    (
        "a port more in the later sweep",
        lambda s1, s2, node: (s2 / node / "ethtool@rail8.txt").write_text(
            (s2 / node / "ethtool@rail0.txt").read_text()
        ),
    ),
    ("a port's output missing in the earlier sweep", lambda s1, s2, node: (s1 / node / "ethtool@rail5.txt").unlink()),
]


@pytest.mark.parametrize(("what", "edit"), UNSTACKED, ids=[u[0] for u in UNSTACKED])
def test_a_node_s_ports_not_rated_as_one_frame_judge_as_snapshots(
    fabric: tuple[Plan, list[Path]], tmp_path: Path, what: str, edit: Callable[..., object]
) -> None:
    """A node's ethtool outputs are one frame in a sweep that reads them all plainly; where the other sweep does
    not hold the same frame, each port is rated on its own, as the snapshots are."""
    import shutil

    plan, folders = fabric
    copies = [Path(shutil.copytree(f, tmp_path / f.name)) for f in folders]
    node = next(p.name for p in sorted(copies[1].iterdir()) if p.name.startswith("gpu"))
    edit(*copies, node)
    index = LinkIndex(plan)
    objects, framed = _assess(plan, copies, None, 1), _assess(plan, copies, index, 1)
    assert framed.report.to_dict() == objects.report.to_dict()
    assert list(framed.corr.ends) == list(objects.corr.ends)
    assert framed.corr.errors == objects.corr.errors and framed.corr.unplanned == objects.corr.unplanned


def test_a_node_s_ports_in_both_sweeps_are_one_rated_frame(fabric: tuple[Plan, list[Path]]) -> None:
    _, folders = fabric
    node = next(p.name for p in sorted(folders[1].iterdir()) if p.name.startswith("gpu"))
    sweeps = [samples.read_devices(samples.Sweep(f, float(i)), [node], frames=True) for i, f in enumerate(folders)]
    assert all((node, samples.ETHTOOL_STACK) in s.frames for s in sweeps)
    got = rated.rate(sweeps)
    stacked = [r for r in got.readings if isinstance(r, RatedFrame) and r.tool == "ethtool -S"]
    assert len(stacked) == 1 and stacked[0].rows == [f"rail{i}" for i in range(8)]
