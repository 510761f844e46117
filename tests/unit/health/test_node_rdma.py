"""The quick and the periodic health stage read the RDMA ports three more ways (ibstatus, ibv_devinfo, rdma statistic
show) and judge them.

The probes run as hwaac.health.node.commands() names them against the fakes of a simulated node (tests/fakes/bin,
ports from tests/fakes/rdma_ports.py), then hwaac.health.node.evaluate(); the cases are a table of node knobs, the
rails the host's nic-roce.json names, the profile's link layer, and what each probe must report.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from hwaac.health import node
from hwaac.health.profile import load_profile
from hwaac.health.result import Status
from tests.fakes import gpu_node

REPO = Path(__file__).resolve().parents[3]
FAKE_BIN = REPO / "tests" / "fakes" / "bin"
FIX = REPO / "tests" / "fixtures" / "health"
H200 = load_profile("hgx-h200-8x400g")
RAILS = tuple(f"mlx5_{i}" for i in range(8))
PROBES = ("ibstatus", "ibv_devinfo", "rdma_statistic")


def ib_profile():
    return H200.model_copy(update={"nic": H200.nic.model_copy(update={"link_layer": "InfiniBand"})})


def run_probes(tmp_path: Path, stage: str = "quick", **knobs: object) -> dict[str, dict]:
    state = tmp_path / "gpu-node-01"
    state.mkdir()
    if knobs:
        gpu_node.save(state, **knobs)
    env = {**os.environ, "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}", "HWAAC_FAKE_STATE": str(state)}
    probes = node.commands(stage, H200)
    out = {}
    for name in PROBES:
        p = subprocess.run(probes[name], env=env, capture_output=True, text=True, timeout=60)
        out[name] = {"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr, "seconds": 0.1, "timed_out": False}
    return out


def by_probe(outputs: dict[str, dict], profile, rails) -> dict[str, set[tuple[str, str, str]]]:
    """Per probe the (code, status, subject) of its findings, each probe evaluated alone."""
    ctx = node.Context(node="gpu-node-01", rails=rails)
    return {
        name: {(f.code, str(f.status), f.subject) for f in node.evaluate({name: out}, profile, ctx)}
        for name, out in outputs.items()
    }


DOWN3 = ("NIC_PORT_DOWN", "FAIL", "mlx5_3 port 1")
RAILS_DOWN3 = ("NIC_RAILS_DOWN", "FAIL", "mlx5_3 port 1")
CASES = [
    # name, knobs, profile, rails, findings of ibstatus / ibv_devinfo / rdma_statistic
    ("healthy RoCE node", {}, H200, RAILS, set(), set(), set()),
    ("healthy InfiniBand node", {"link_layer": "InfiniBand"}, ib_profile(), RAILS, set(), set(), set()),
    ("rails from the profile's link layer", {}, H200, None, set(), set(), set()),
    ("a rail Down/Polling", {"dead_rails": [3]}, H200, RAILS, {DOWN3, RAILS_DOWN3}, {DOWN3, RAILS_DOWN3}, set()),
    (
        "an IB rail Down/Polling",
        {"link_layer": "InfiniBand", "dead_rails": [3]},
        ib_profile(),
        RAILS,
        {DOWN3, RAILS_DOWN3},
        {DOWN3, RAILS_DOWN3},
        set(),
    ),
    (
        "links at 200 of 400 Gb/s (ibstatus prints the rate, ibv_devinfo without -v does not)",
        {"rate": 200},
        H200,
        RAILS,
        {("NIC_RATE_LOW", "FAIL", f"{dev} port 1") for dev in RAILS},
        set(),
        set(),
    ),
    (
        "a rail device gone",
        {"rails": 7},
        H200,
        RAILS,
        {("NIC_MISSING", "FAIL", "mlx5_7"), ("NIC_RAILS_DOWN", "FAIL", "")},
        {("NIC_MISSING", "FAIL", "mlx5_7"), ("NIC_RAILS_DOWN", "FAIL", "")},
        {("NIC_COUNTERS_MISSING", "UNKNOWN", "mlx5_7")},
    ),
    (
        "InfiniBand ports where the SKU has RoCE",
        {"link_layer": "InfiniBand"},
        H200,
        RAILS,
        {("NIC_LINK_LAYER", "FAIL", f"{dev} port 1") for dev in RAILS},
        {("NIC_LINK_LAYER", "FAIL", f"{dev} port 1") for dev in RAILS},
        set(),
    ),
]


@pytest.mark.parametrize(
    ("knobs", "profile", "rails", "ibstatus", "ibv_devinfo", "rdma_statistic"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_quick_stage_judges_the_rdma_ports(
    tmp_path: Path, knobs: dict, profile, rails, ibstatus: set, ibv_devinfo: set, rdma_statistic: set
) -> None:
    found = by_probe(run_probes(tmp_path, **knobs), profile, rails)
    assert found == {"ibstatus": ibstatus, "ibv_devinfo": ibv_devinfo, "rdma_statistic": rdma_statistic}


@pytest.mark.parametrize("stage", ["quick", "health"])
def test_the_stage_names_the_probes(stage: str) -> None:
    probes = node.commands(stage, H200)
    assert {k: probes.get(k) for k in PROBES} == {
        "ibstatus": ["ibstatus"],
        "ibv_devinfo": ["ibv_devinfo"],
        "rdma_statistic": ["rdma", "statistic", "show"],
    }


def test_the_periodic_health_stage_judges_a_dead_rail_through_the_rdma_probes(tmp_path: Path) -> None:
    """A production node's rail down: ibstatus and ibv_devinfo of the health stage fail it (each probe alone)."""
    found = by_probe(run_probes(tmp_path, "health", dead_rails=[3]), H200, RAILS)
    assert found == {"ibstatus": {DOWN3, RAILS_DOWN3}, "ibv_devinfo": {DOWN3, RAILS_DOWN3}, "rdma_statistic": set()}


def test_a_dead_rail_fails_the_node_once_per_port(tmp_path: Path) -> None:
    """ibstat, ibstatus and ibv_devinfo all see the dead port: the verdict names it once (same code and subject)."""
    outputs = run_probes(tmp_path, dead_rails=[5])
    ctx = node.Context(node="gpu-node-01", rails=RAILS)
    result = node.verdict("gpu-node-01", {"quick": node.evaluate(outputs, H200, ctx)})
    assert result.status == Status.FAIL and result.action.value == "check_link"
    assert [f.subject for f in result.findings if f.code == "NIC_PORT_DOWN"] == ["mlx5_5 port 1"]


def cut(text: str, fraction: float) -> str:
    return text[: int(len(text) * fraction)]


BROKEN = [
    ("ibstatus cut in a block", "ibstatus", lambda out: {**out, "stdout": cut(out["stdout"], 0.55)}),
    ("ibv_devinfo cut in a block", "ibv_devinfo", lambda out: {**out, "stdout": cut(out["stdout"], 0.55)}),
    ("rdma statistic cut in a line", "rdma_statistic", lambda out: {**out, "stdout": cut(out["stdout"], 0.5)}),
    (
        "ibstatus without sysfs",
        "ibstatus",
        lambda out: {
            **out,
            "rc": 1,
            "stdout": "",
            "stderr": "Fatal error:  device 'mlx5_0': sys files not found (/sys/class/infiniband/mlx5_0/ports)\n",
        },
    ),
    (
        "rdma tool missing",
        "rdma_statistic",
        lambda out: {**out, "rc": None, "stdout": "", "stderr": "[Errno 2] No such file or directory: 'rdma'"},
    ),
    ("ibv_devinfo timed out", "ibv_devinfo", lambda out: {**out, "timed_out": True, "stdout": ""}),
    ("ibv_devinfo empty", "ibv_devinfo", lambda out: {**out, "stdout": ""}),
]


@pytest.mark.parametrize(("probe", "damage"), [c[1:] for c in BROKEN], ids=[c[0] for c in BROKEN])
def test_an_incomplete_output_is_unknown_never_pass(tmp_path: Path, probe: str, damage) -> None:
    outputs = run_probes(tmp_path)
    ctx = node.Context(node="gpu-node-01", rails=RAILS)
    found = node.evaluate({probe: damage(outputs[probe])}, H200, ctx)
    result = node.verdict("gpu-node-01", {"quick": found})
    assert result.status == Status.UNKNOWN and result.action.value == "retest", found


@pytest.mark.parametrize(
    ("probe", "recorded"),
    [
        ("ibstatus", FIX / "ibstatus" / "roce-2port-one-disabled.txt"),
        ("ibv_devinfo", FIX / "ibv_devinfo" / "cx7-eth-and-ib-2hca.txt"),
        ("rdma_statistic", FIX / "rdma-statistic" / "mlnx-iproute2-4link.txt"),
    ],
)
def test_fakes_print_the_recorded_layout(tmp_path: Path, probe: str, recorded: Path) -> None:
    """The fakes' labels (ibstatus, ibv_devinfo) and counter names (rdma statistic) are the recorded ones."""
    fake = run_probes(tmp_path)[probe]["stdout"]
    real = recorded.read_text()
    if probe == "rdma_statistic":
        names = [set(re.findall(r"(\w+) \d+", line)) for line in (fake.splitlines()[0], real.splitlines()[0])]
        assert names[0] <= names[1]
    else:
        labels = [
            [re.sub(r"\s+", " ", line.split(":")[0].strip()) for line in text.split("\n\n")[0].splitlines()]
            for text in (fake, real)
        ]
        assert labels[0] == labels[1]


# --- growth of the rdma statistic counters between stages ------------------------------------------------------------

STAT = FIX / "rdma-statistic"
BEFORE = (STAT / "mlnx-iproute2-4link.txt").read_text()
# the derived second reading: mlx5_0/1 local_ack_timeout_err 0 -> 17 (README), above the profile's warn rate in 10 s
AFTER = (STAT / "mlnx-iproute2-4link-after_derived.txt").read_text()
RNR = BEFORE.replace(
    "link mlx5_2/1 rx_write_requests 0 rx_read_requests 0 rx_atomic_requests 0 out_of_buffer 0 "
    "out_of_sequence 0 duplicate_request 0 rnr_nak_retry_err 0",
    "link mlx5_2/1 rx_write_requests 0 "
    "rx_read_requests 0 rx_atomic_requests 0 out_of_buffer 0 out_of_sequence 0 duplicate_request 0 "
    "rnr_nak_retry_err 2",
)
ACK_RATE = ("NIC_LOCAL_ACK_TIMEOUT_ERR_RATE", "WARN", "mlx5_0 port 1", "check_link")
GROWTH = [
    # name, rdma_statistic_before, this stage's reading, counters_seconds, (code, status, subject, action) found
    ("no earlier reading: one reading judged", None, AFTER, 10.0, set()),
    ("no growth", BEFORE, BEFORE, 10.0, set()),
    ("a warn rate over 10 s", BEFORE, AFTER, 10.0, {ACK_RATE}),
    ("no interval: rates unknown, no fatal counter grew", BEFORE, AFTER, None, set()),
    ("a fatal counter grew", BEFORE, RNR, 10.0, {("NIC_RNR_NAK_RETRY_ERR", "FAIL", "mlx5_2 port 1", "check_link")}),
    (
        "a fatal counter grew, no interval",
        BEFORE,
        RNR,
        None,
        {("NIC_RNR_NAK_RETRY_ERR", "FAIL", "mlx5_2 port 1", "check_link")},
    ),
]


@pytest.mark.parametrize(
    ("before", "after", "seconds", "expected"), [c[1:] for c in GROWTH], ids=[c[0] for c in GROWTH]
)
def test_rdma_statistic_growth_since_the_earlier_stage(
    before: str | None, after: str, seconds: float | None, expected: set
) -> None:
    ctx = node.Context(node="gpu-node-01", rdma_statistic_before=before, counters_seconds=seconds)
    found = node.evaluate(
        {"rdma_statistic": {"rc": 0, "stdout": after, "stderr": "", "seconds": 0.1, "timed_out": False}}, H200, ctx
    )
    assert {(f.code, str(f.status), f.subject, f.action.value) for f in found} == expected


def test_a_torn_earlier_reading_withholds_the_link_repair() -> None:
    """The earlier reading cut in a line: the growth it shows is no evidence for a technician, only a retest."""
    ctx = node.Context(node="gpu-node-01", rdma_statistic_before=cut(BEFORE, 0.9), counters_seconds=10.0)
    found = node.evaluate(
        {"rdma_statistic": {"rc": 0, "stdout": RNR, "stderr": "", "seconds": 0.1, "timed_out": False}}, H200, ctx
    )
    result = node.verdict("gpu-node-01", {"ib_pairwise": found})
    assert (result.status, result.action.value) == (Status.UNKNOWN, "retest")
    assert "NIC_RNR_NAK_RETRY_ERR" in result.codes  # seen, and withheld


def test_ib_pairwise_reads_the_rdma_statistic_again() -> None:
    probes = node.commands("ib_pairwise", H200, rails=list(RAILS), peer="gpu-node-02")
    assert probes["rdma_statistic"] == ["rdma", "statistic", "show"]
    assert list(probes).index("rdma_statistic") > max(i for i, n in enumerate(probes) if n.startswith("ib_write_bw_"))
