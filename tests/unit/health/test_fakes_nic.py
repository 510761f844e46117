"""The NIC-side fakes of a simulated GPU node (tests/fakes/bin/ibstat, ib_write_bw, tests/fakes/nic_counters.py)
read by hwaac's own parsers, checks and node evaluation.

Each node is a sibling folder ``<tmp>/<node>`` (``HWAAC_FAKE_STATE``); knobs go to its ``gpu_node.json``
(tests/fakes/gpu_node.py). The fakes run as separate processes with ``tests/fakes/bin`` first on PATH.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from hwaac.health import checks, checks_nic, node
from hwaac.health.parsers import growth as ib_growth
from hwaac.health.parsers.growth import port_counter_growth
from hwaac.health.parsers.ib_counters import ERROR_COUNTERS, LEGACY_COUNTER_BITS, parse_ib_counters
from hwaac.health.parsers.ibstat import parse_ibstat
from hwaac.health.perftest_grading import read_perftest
from hwaac.health.profile import load_profile
from hwaac.health.result import Status
from tests.fakes import gpu_node, nic_counters

REPO = Path(__file__).resolve().parents[3]
FAKE_BIN = REPO / "tests" / "fakes" / "bin"
FIX = REPO / "tests" / "fixtures" / "health"
PROFILE = load_profile("hgx-h200-8x400g")
RAILS = [f"mlx5_{i}" for i in range(8)]
PAIRWISE_ARGS = ["-s", "8388608", "-D", "10", "-F", "--report_gbits"]


class Node:
    """A simulated node: its state folder, knobs and a way to run a fake (or ``sh -c``) on it."""

    def __init__(self, root: Path, name: str, **knobs: object) -> None:
        self.name = name
        self.state = root / name
        self.state.mkdir(parents=True, exist_ok=True)
        if knobs:
            gpu_node.save(self.state, **knobs)
        self.env = {
            **os.environ,
            "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}",
            "HWAAC_FAKE_STATE": str(self.state),
        }

    @property
    def sys(self) -> str:
        return str(nic_counters.sys_root(self.state))

    def run(self, argv: list[str], **env: str) -> dict:
        """Run like the node_probe module: a probe output dict."""
        started = time.monotonic()
        p = subprocess.run(argv, env={**self.env, **env}, capture_output=True, text=True, timeout=60)
        return {
            "rc": p.returncode,
            "stdout": p.stdout,
            "stderr": p.stderr,
            "seconds": time.monotonic() - started,
            "timed_out": False,
        }

    def server(self, argv: list[str], **env: str) -> subprocess.Popen:
        """Start an ib_write_bw server (no peer) and wait until it listens."""
        proc = subprocess.Popen(
            argv, env={**self.env, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        port = argv[argv.index("-p") + 1]
        marker = self.state / "ib_write_bw" / f"listen-{port}.json"
        deadline = time.monotonic() + 20
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "server did not start listening"
            time.sleep(0.02)
        return proc

    def counters(self) -> str:
        argv = node.commands("quick", PROFILE, sysfs_root=self.sys)["ib_counters"]
        return self.run(argv)["stdout"]


def finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=30)
    return proc.returncode, out, err


def client_argv(rail: int, peer: str, *, port: int | None = None) -> list[str]:
    return [
        "ib_write_bw",
        "-d",
        f"mlx5_{rail}",
        "-p",
        str(port or 18515 + rail),
        *PAIRWISE_ARGS,
        f"--use_cuda={rail}",
        peer,
    ]


# --- ibstat ---------------------------------------------------------------------------------------------------------


def test_ibstat_healthy_parses_to_pass_with_rate_and_rails(tmp_path):
    out = Node(tmp_path, "gpu-a").run(["ibstat"])
    assert out["rc"] == 0 and out["stderr"] == ""
    r = parse_ibstat(out["stdout"])
    assert checks_nic.check_ibstat_ports(r) == [] and not r.unknown
    assert [ca.name for ca in r.cas] == RAILS
    assert {ca.ca_type for ca in r.cas} == {"MT4129"}
    assert [(p.ca, p.working_rate_gbps, p.link_layer) for p in r.up_ports()] == [(d, 400.0, "Ethernet") for d in RAILS]
    assert checks_nic.check_ibstat(r, PROFILE, RAILS) == []


def test_ibstat_follows_the_recorded_field_sets(tmp_path):
    def keys(text: str) -> list[str]:
        return [line.split(":")[0].strip() for line in text.splitlines() if line.strip()]

    roce = (FIX / "ibstat" / "rdma-core-47" / "h100-roce-400g-down-polling.txt").read_text()
    ib = (FIX / "ibstat" / "rdma-core-47" / "h100-ib-ndr-8hca-active.txt").read_text()
    out = Node(tmp_path, "gpu-a").run(["ibstat", "mlx5_0"])["stdout"]
    assert keys(out) == keys(roce.split("CA 'mlx5_1'")[0])
    assert "\tCA type: MT4129\n" in out and "\t\tBase lid: 0\n\t\tLMC: 0\n\t\tSM lid: 0\n" in out
    ib_out = Node(tmp_path, "gpu-ib", link_layer="InfiniBand").run(["ibstat", "mlx5_0"])["stdout"]
    assert keys(ib_out) == keys(ib.split("CA 'mlx5_1'")[0])
    assert "\t\tSM lid: 1\n\t\tCapability mask: 0xa751e848\n" in ib_out
    assert "Link layer: InfiniBand" in ib_out
    node_guid = re.search(r"Node GUID: (\S+)", ib_out).group(1)
    assert f"Port GUID: {node_guid}\n" in ib_out  # the IB port GUID is the node GUID, as recorded


@pytest.mark.parametrize(("layer", "polling_rate"), [("Ethernet", 40.0), ("InfiniBand", 10.0)])
def test_ibstat_dead_rail_is_down_polling(tmp_path, layer, polling_rate):
    out = Node(tmp_path, "gpu-a", dead_rails=[3], link_layer=layer).run(["ibstat"])
    r = parse_ibstat(out["stdout"])
    [down] = checks_nic.check_ibstat_ports(r)
    assert (down.code, down.subject) == ("NIC_PORT_DOWN", "mlx5_3 port 1")
    port = r.port("mlx5_3")
    assert (port.state, port.physical_state, port.rate_gbps, port.working_rate_gbps) == (
        "Down",
        "Polling",
        polling_rate,
        None,
    )
    found = {f.code for f in checks_nic.check_ibstat(r, PROFILE, RAILS)}
    assert {"NIC_PORT_DOWN", "NIC_RAILS_DOWN"} <= found


def test_ibstat_rate_knob_and_single_ca(tmp_path):
    n = Node(tmp_path, "gpu-a", rate=200, rails=4)
    r = parse_ibstat(n.run(["ibstat", "mlx5_2"])["stdout"])
    assert [ca.name for ca in r.cas] == ["mlx5_2"] and r.port("mlx5_2").working_rate_gbps == 200.0
    assert "NIC_RATE_LOW" in {f.code for f in checks_nic.check_ibstat(r, PROFILE, ["mlx5_2"])}
    alone = parse_ibstat(n.run(["ibstat", "mlx5_2", "1"])["stdout"])
    assert not alone.unknown and alone.port("mlx5_2").is_up
    assert n.run(["ibstat", "-l"])["stdout"].split() == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]


def test_ibstat_unknown_device_is_the_recorded_ibpanic(tmp_path):
    out = Node(tmp_path, "gpu-a").run(["ibstat", "mlx5_8"])
    assert out["rc"] == 255 and out["stdout"] == ""
    recorded = (FIX / "ibstat" / "rdma-core-39" / "a100-ibpanic.txt").read_text().strip().splitlines()[-1]
    assert re.sub(r"\[\d+\]", "[N]", out["stderr"].strip()) == re.sub(r"\[\d+\]", "[N]", recorded)
    r = parse_ibstat(out["stdout"] + "\n" + out["stderr"])  # stdout and stderr together, as node.py passes them
    assert r.failed_device == "mlx5_8" and [f.code for f in checks_nic.check_ibstat_ports(r)] == ["IB_IBSTAT_PANIC"]


# --- counters -------------------------------------------------------------------------------------------------------


def test_counter_tree_reads_clean_with_the_recorded_names(tmp_path):
    n = Node(tmp_path, "gpu-a")
    nic_counters.ensure_tree(n.state, 8)
    r = parse_ib_counters(n.counters())
    assert r.status() == Status.PASS and not r.unknown and not r.findings
    assert sorted(r.ports) == [(d, 1) for d in RAILS]
    recorded = {
        line.split("/counters/")[1].split(":")[0]
        for line in (FIX / "ib-counters" / "gpud-943-saturated" / "counters.txt").read_text().splitlines()
    }
    procfs = (FIX / "ib-counters" / "procfs-fixture" / "counters.txt").read_text().splitlines()
    hw = {line.split("/hw_counters/")[1].split(":")[0] for line in procfs if "mlx5_0/ports/1/hw_counters/" in line}
    assert set(nic_counters.COUNTERS) == recorded and set(nic_counters.HW_COUNTERS) == hw
    mlx5_0 = r.counters("mlx5_0")
    assert all(mlx5_0[name] == 0 for name in ERROR_COUNTERS)
    assert mlx5_0["port_xmit_data"] > 0 and mlx5_0["port_rcv_packets"] > 0
    assert nic_counters.LEGACY_COUNTER_BITS == LEGACY_COUNTER_BITS


def test_bump_stops_legacy_counters_at_their_width(tmp_path):
    n = Node(tmp_path, "gpu-a")
    nic_counters.ensure_tree(n.state, 2)
    assert nic_counters.bump(
        n.state, "mlx5_1", link_downed=300, symbol_error=5, port_xmit_data=2**40, rnr_nak_retry_err=2
    ) == {"link_downed": 255, "symbol_error": 5, "port_xmit_data": 2880761508848 + 2**40, "rnr_nak_retry_err": 2}
    assert nic_counters.bump(n.state, "mlx5_1", local_link_integrity_errors=99)["local_link_integrity_errors"] == 15
    r = parse_ib_counters(n.counters())
    assert set(r.saturated[("mlx5_1", 1)]) == {"link_downed", "local_link_integrity_errors"}
    assert "IB_COUNTER_SATURATED" in {f.code for f in checks_nic.check_ib_counters(r)}
    assert r.counters("mlx5_1")["link_downed"] is None and r.counters("mlx5_1")["symbol_error"] == 5
    with pytest.raises(KeyError):
        nic_counters.bump(n.state, "mlx5_1", no_such_counter=1)


# --- ib_write_bw ----------------------------------------------------------------------------------------------------


def test_server_and_client_measure_the_knob(tmp_path):
    a, b = Node(tmp_path, "gpu-a"), Node(tmp_path, "gpu-b", ib_write_bw=371.25)
    nic_counters.ensure_tree(a.state, 8)
    before = parse_ib_counters(a.counters())
    server = b.server(client_argv(2, "gpu-a")[:-1])
    out = a.run(client_argv(2, "gpu-b"))
    rc, srv_out, srv_err = finish(server)
    assert out["rc"] == 0 and rc == 0 and srv_err == ""
    for raw in (out["stdout"], srv_out):
        res = read_perftest(raw, exit_code=0)
        assert res.status() == Status.PASS, res.all_findings()
        assert (res.device, res.bw_at(8388608), res.gpudirect, res.gpu_name) == ("mlx5_2", 371.25, True, "NVIDIA H200")
        assert res.duration_mode and res.bw_peak_gbits_per_s is None and res.link_type == "Ethernet"
    assert "* Waiting for client to connect... *" in srv_out and "TX depth" not in srv_out
    th = PROFILE.performance.ib_write_bw_per_port_gbits_per_s
    assert [(f.code, f.status) for f in checks.check_perftest(read_perftest(out["stdout"]), th)] == [
        ("NIC_WRITE_BW_LOW", Status.WARN)
    ]  # 371.25 < 380 (warn), >= 360 (min)
    growth = port_counter_growth(before, parse_ib_counters(a.counters()), 10.0)[("mlx5_2", 1)]
    assert growth["port_xmit_data"].delta == int(371.25e9 / 8 * 10) // 4
    assert not ib_growth.grown(growth, ERROR_COUNTERS)
    assert not (b.state / "ib_write_bw" / "listen-18517.json").exists()


def test_client_layout_follows_the_recorded_gpudirect_duration_run(tmp_path):
    # The recorded command's options (a40-gpudirect-duration-gbits/README.md), without --source_ip.
    args = shlex.split("-R -T 41 -s 65536 -F -x 3 -m 4096 --report_gbits -q 16 -D 60 -d mlx5_1 -p 10000 --use_cuda=0")
    a, b = Node(tmp_path, "gpu-a", gpus=1, product_name="NVIDIA A40"), Node(tmp_path, "gpu-b")
    server = b.server(["ib_write_bw", *args])
    out = a.run(["ib_write_bw", *args, "gpu-b"])
    assert finish(server)[0] == 0
    recorded = (FIX / "perftest" / "a40-gpudirect-duration-gbits" / "ib_write_bw-client.out").read_text()

    def shape(text: str) -> list[str]:  # each line up to its first digit; MTU fallback lines left out
        return [
            re.split(r"\d", line)[0]
            for line in text.splitlines()
            if not line.startswith(("Requested mtu", "Changing to"))
        ]

    assert shape(out["stdout"]) == shape(recorded)
    assert out["stdout"].count(" remote address: LID 0000 QPN ") == 16
    row = next(line for line in out["stdout"].splitlines() if line.startswith(" 65536"))
    assert re.fullmatch(r" 65536      \d+\s+0\.00               397\.50 \t\t     0\.758171", row)
    assert "[pid = " in out["stdout"] and "device name = [NVIDIA A40]" in out["stdout"]


def test_no_server_is_the_recorded_connect_failure(tmp_path):
    a = Node(tmp_path, "gpu-a")
    Node(tmp_path, "gpu-b")
    out = a.run(["ib_write_bw", "-d", "mlx5_0", "-p", "18515", "--report_gbits", "gpu-b"])
    recorded = (FIX / "perftest" / "connect-failure" / "ib_write_bw.out").read_text()
    assert out["rc"] == 1 and out["stderr"] == recorded.replace("192.0.2.211", "gpu-b")
    res = read_perftest(out["stdout"] + "\n" + out["stderr"], exit_code=1)
    assert res.status() == Status.UNKNOWN and [f.code for f in res.findings] == ["PERFTEST_CONNECT_FAILED"]


def test_server_without_client_gives_up(tmp_path):
    b = Node(tmp_path, "gpu-b")
    out = b.run(["ib_write_bw", "-d", "mlx5_0", "-p", "18515"], HWAAC_FAKE_IB_WRITE_BW_WAIT="0.2")
    assert out["rc"] == 1 and "accept() failed\nUnable to open file descriptor for socket connection\n" in out["stderr"]
    assert read_perftest(out["stdout"] + out["stderr"], exit_code=1).status() > Status.PASS
    assert not (b.state / "ib_write_bw" / "listen-18515.json").exists()


@pytest.mark.parametrize("dead_side", ["local", "peer"])
def test_dead_rail_fails_the_client_and_grows_link_downed(tmp_path, dead_side):
    a = Node(tmp_path, "gpu-a", **({"dead_rails": [3]} if dead_side == "local" else {}))
    b = Node(tmp_path, "gpu-b", **({"dead_rails": [3]} if dead_side == "peer" else {}))
    for n in (a, b):
        nic_counters.ensure_tree(n.state, 8)
    before = {n.name: parse_ib_counters(n.counters()) for n in (a, b)}
    server = b.server(client_argv(3, "gpu-a")[:-1])
    out = a.run(client_argv(3, "gpu-b"))
    rc, _, srv_err = finish(server)
    assert out["rc"] == 1 and rc == 1 and "Failed to exchange data between server and clients" in srv_err
    res = read_perftest(out["stdout"] + "\n" + out["stderr"], exit_code=1)
    assert res.status() == Status.FAIL and "PERFTEST_COMPLETION_ERROR" in {f.code for f in res.findings}
    assert " Completion with error at client\n Failed status 12: wr_id 0 syndrom 0x81\n" in out["stderr"]
    dead, alive = (a, b) if dead_side == "local" else (b, a)
    growth = port_counter_growth(before[dead.name], parse_ib_counters(dead.counters()), 10.0)
    assert (growth[("mlx5_3", 1)]["link_downed"].delta, growth[("mlx5_3", 1)]["symbol_error"].delta) == (1, 16)
    assert ib_growth.grown_by_port(growth) == {"mlx5_3 port 1": ["link_downed", "symbol_error"]}
    assert ("NIC_LINK_DOWNED", Status.FAIL) in {
        (f.code, f.status) for f in checks_nic.check_counter_growth(growth, PROFILE)
    }
    other = port_counter_growth(before[alive.name], parse_ib_counters(alive.counters()), 10.0)
    assert ib_growth.grown_by_port(other) == {}


def test_unknown_device_and_busy_port(tmp_path):
    a = Node(tmp_path, "gpu-a")
    out = a.run(["ib_write_bw", "-d", "mlx5_9", "gpu-b"])
    assert out["rc"] == 1 and "IB device mlx5_9 not found" in out["stderr"]
    server = a.server(["ib_write_bw", "-d", "mlx5_0", "-p", "18600"])
    try:
        busy = a.run(["ib_write_bw", "-d", "mlx5_1", "-p", "18600"])
        assert busy["rc"] == 1 and "Couldn't listen to port 18600" in busy["stderr"]
    finally:
        server.terminate()
        server.communicate(timeout=10)
    assert not (a.state / "ib_write_bw" / "listen-18600.json").exists()


# --- the ib_pairwise stage, evaluated ---------------------------------------------------------------------------------


def run_pairwise(a: Node, b: Node, *, servers_ok: bool = True) -> dict[str, dict]:
    """Servers for every rail on b, then a's ib_pairwise probes as node.commands names them."""
    probes = node.commands("ib_pairwise", PROFILE, sysfs_root=a.sys, rails=RAILS, peer=b.name)
    servers = [b.server(argv[:-1]) for name, argv in probes.items() if name.startswith("ib_write_bw_")]
    outputs = {name: a.run(argv) for name, argv in probes.items()}
    codes = [finish(proc)[0] for proc in servers]
    if servers_ok:
        assert codes == [0] * len(servers)
    return outputs


def test_ib_pairwise_of_a_healthy_pair_evaluates_to_pass(tmp_path):
    a, b = Node(tmp_path, "gpu-a"), Node(tmp_path, "gpu-b")
    nic_counters.ensure_tree(a.state, 8)
    before = a.counters()
    outputs = run_pairwise(a, b)
    assert set(outputs) == {*(f"ib_write_bw_{d}" for d in RAILS), "ibstat", "ib_counters", "rdma_statistic"}
    ctx = node.Context(node="gpu-a", rails=tuple(RAILS), counters_before=before, counters_seconds=80.0)
    found = node.evaluate(outputs, PROFILE, ctx)
    assert [f for f in found if f.status > Status.PASS] == []
    verdict = node.verdict("gpu-a", {"ib_pairwise": found})
    assert verdict.status == Status.PASS and verdict.codes == []
    res = read_perftest(outputs["ib_write_bw_mlx5_7"]["stdout"])
    assert res.bw_at(8388608) == 397.5 and "Picking device No. 7" in outputs["ib_write_bw_mlx5_7"]["stdout"]


def test_a_pair_that_fails_on_the_peers_dead_rail_is_unknown_here_and_fail_there(tmp_path):
    # b's rail 5 is dead: a's client on mlx5_5 fails, but a's own port is up with no error growth, so a pair
    # failure alone does not condemn a (UNKNOWN, retest); b's own client run on the dead rail does condemn b.
    a, b = Node(tmp_path, "gpu-a"), Node(tmp_path, "gpu-b", dead_rails=[5])
    for n in (a, b):
        nic_counters.ensure_tree(n.state, 8)
    before_a, before_b = a.counters(), b.counters()
    outputs = run_pairwise(a, b, servers_ok=False)
    found = node.evaluate(
        outputs,
        PROFILE,
        node.Context(node="gpu-a", rails=tuple(RAILS), counters_before=before_a, counters_seconds=60.0),
    )
    bad = [f for f in found if f.status > Status.PASS]
    assert bad and {f.subject for f in bad} == {"mlx5_5 port 1"}
    assert {f.status for f in bad} == {Status.UNKNOWN} and "peer's side is suspect" in bad[0].message
    outputs = run_pairwise(b, a, servers_ok=False)
    found = node.evaluate(
        outputs,
        PROFILE,
        node.Context(node="gpu-b", rails=tuple(RAILS), counters_before=before_b, counters_seconds=60.0),
    )
    assert {f.code for f in found if f.status == Status.FAIL} >= {"NIC_PORT_DOWN", "NIC_LINK_DOWNED"}
