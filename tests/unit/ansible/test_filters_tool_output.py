"""The tool output filters (plugins/filter/tool_output.py): every tool name reaches its parser, with the options and
the registered result's rc/stderr passed on; results are plain data; bad input fails naming what is valid.

Each case reads a recorded output from tests/fixtures and checks facts that can be read off that file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.aiinfra.hwaac.plugins.filter.tool_output import FilterModule
from hwaac.tool_facts import PARSERS

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
FILTERS = FilterModule().filters()


def dig(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


def fixture(rel: str) -> str:
    return (FIXTURES / rel).read_text()


# (filter, positional args, options, fixture, {path: expected fact})
CASES: list[tuple[str, tuple[Any, ...], dict[str, Any], str, dict[tuple[Any, ...], Any]]] = [
    (
        "nvidia_smi_facts",
        (),
        {},
        "health/nvidia-smi/h200-580.159.04/q-x.xml",
        {
            ("driver_version",): "580.159.04",
            ("attached_gpus",): 1,
            ("gpus", 0, "product_name"): "NVIDIA H200",
            ("graded",): False,
        },
    ),
    (
        "nvidia_smi_facts",
        ("text",),
        {},
        "health/nvidia-smi/h200-580.159.04/q.txt",
        {("tool",): "nvidia-smi -q", ("gpus", 0, "pci_bus_id"): "00000000:00:06.0"},
    ),
    (
        "nvidia_smi_facts",
        ("query-gpu",),
        {},
        "health/nvidia-smi/h200-580.159.04/query-gpu.csv",
        {("rows", 0, "name"): "NVIDIA H200", ("units", "power.limit"): "W"},
    ),
    (
        "nvidia_smi_facts",
        ("remapped-rows",),
        {},
        "health/nvidia-smi/h200-580.159.04-derived/query-remapped-rows-pending.csv",
        {("rows", 0, "pending"): True, ("rows", 0, "uncorrectable"): 1},
    ),
    (
        "nvidia_smi_facts",
        ("nvlink-status",),
        {},
        "health/nvidia-smi/h100-550.90.07-8gpu/nvlink-s.txt",
        {("gpus", 7, "index"): 7, ("gpus", 0, "links", "0"): 26.562},
    ),
    (
        "parse_tool_output",
        ("nvlink-errors",),
        {},
        "health/nvidia-smi/h100-550.90.07-8gpu-derived/nvlink-e-crc.txt",
        {("gpus", 2, "counters", "5"): {"replay_errors": 0, "recovery_errors": 1, "crc_errors": 12}},
    ),
    (
        "dcgm_facts",
        (),
        {},
        "health/dcgmi/4.2.3-gb10/diag-r1-pass.json",
        {
            ("version",): "4.2.3",
            ("results", 0, "test"): "software",
            ("results", 0, "status"): "Pass",
            ("results", 0, "verdict"): None,
        },
    ),
    (
        "dcgm_facts",
        ("diag-text",),
        {},
        "health/dcgmi/table/4.4.2-dcgm124-diag-r2.txt",
        {("results", 1, "test"): "memory", ("results", 1, "status"): "Pass"},
    ),
    (
        "dcgm_facts",
        ("health-json",),
        {},
        "health/dcgmi/2.x-virtualclient/health-failure.json",
        {("overall",): "Failure", ("entities", 1, "health"): "Failure"},
    ),
    (
        "ibstat_facts",
        (),
        {},
        "health/ibstat/rdma-core-47/h100-roce-400g-down-polling.txt",
        {
            ("cas", 0, "name"): "mlx5_0",
            ("cas", 0, "ports", 0, "state"): "Active",
            ("cas", 0, "ports", 0, "rate_gbps"): 400.0,
        },
    ),
    (
        "mlxconfig_facts",
        (),
        {},
        "tools/mlxconfig/query_e_targeted_cx6dx.txt",
        {
            ("rows", "NUM_OF_VFS"): {"Default": "8", "Current": "0", "Next Boot": "0"},
            ("modified",): ["NUM_OF_VFS"],
            ("device", "Device type"): "ConnectX6DX",
        },
    ),
    (
        "parse_tool_output",
        ("mlnx-qos",),
        {},
        "tools/mlnx_qos/trust_dscp_pfc3_netarbiter.txt",
        {("trust",): "dscp", ("pfc",): "0,0,0,1,0,0,0,0", ("dscp2prio", "26"): 3},
    ),
    (
        "perftest_facts",
        (),
        {},
        "health/perftest/cx5-100g-roce-mbsec/ib_write_bw.out",
        {
            ("test",): "RDMA_Write BW Test",
            ("device",): "mlx5_0",
            ("bw_rows", 0, "size_bytes"): 65536,
            ("bw_rows", 0, "bw_peak_printed"): 11025.44,
        },
    ),
    (
        "nccl_tests_facts",
        (),
        {},
        "health/nccl-tests/h100-8gpu-single-node/all_reduce_perf.out",
        {("n_gpus",): 8, ("avg_busbw_gbytes_per_s",): 439.369, ("out_of_bounds",): 0},
    ),
    (
        "nccl_tests_facts",
        ("json",),
        {},
        "health/nccl-tests/json-derived/gh200-wrong-all_reduce_perf.json",
        {("findings", 0, "code"): "NCCL_WRONG_RESULTS", ("findings", 0, "status"): "FAIL"},
    ),
    # the tools whose own verdicts a grading module reads: the filter returns them graded, as the checks see them
    (
        "parse_tool_output",
        ("gpu-burn",),
        {},
        "health/gpu-burn/issue69-died/gpu_burn.out",
        {("findings", 0, "code"): "GPUBURN_DIED", ("findings", 0, "status"): "FAIL"},
    ),
    (
        "perftest_facts",
        (),
        {},
        "health/perftest/connect-failure/ib_write_bw.out",
        {("findings", 0, "code"): "PERFTEST_CONNECT_FAILED", ("findings", 0, "status"): "UNKNOWN"},
    ),
    (
        "parse_tool_output",
        ("nvbandwidth",),
        {},
        "health/nvbandwidth/v0.7-issue34-assert/nvbandwidth.out",
        {("findings", 0, "code"): "NVBW_VERIFICATION_FAILED"},
    ),
    (
        "parse_tool_output",
        ("mlxlink-json",),
        {},
        "health/mlxlink/mft-4.30.1-bluefield3/mlxlink-c-json-opcode25-derived.json",
        {("findings", 0, "code"): "NIC_LINK_TROUBLESHOOTING", ("findings", 0, "status"): "WARN"},
    ),
    (
        "lnetctl_facts",
        (),
        {},
        "health/lustre/lnetctl_net_show_v2_2.15_o2ib_derived.txt",
        {("nis", 0, "nid"): "10.20.0.5@o2ib", ("nis", 1, "status"): "down", ("lnet_down",): False},
    ),
    (
        "ethtool_facts",
        (),
        {"netdev": "rail0"},
        "health/ethtool/connectx6dx-100g-pam4/ethtool-S-grep-lanes.txt",
        {("netdev",): "rail0", ("counters", "rx_err_lane_0_phy"): 74171021},
    ),
    (
        "parse_tool_output",
        ("gpu-burn",),
        {},
        "health/gpu-burn/superbench-a100/gpu_burn.log",
        {("tested_gpus",): 8, ("gpus", 0, "summary"): "OK"},
    ),
    (
        "parse_tool_output",
        ("nvbandwidth",),
        {},
        "health/nvbandwidth/v0.6-superbench/nvbandwidth_results.log",
        {("driver_version",): "550.54.15", ("tests", 0, "name"): "host_to_device_memcpy_ce"},
    ),
    (
        "parse_tool_output",
        ("kernel-log",),
        {},
        "health/kernel-log/ogkm-461-xid79-119/dmesg.log",
        {("events", 0, "code"): 79, ("events", 1, "code"): 119, ("graded",): False},
    ),
    (
        "parse_tool_output",
        ("ib-counters",),
        {},
        "health/ib-counters/procfs-fixture/counters.txt",
        {("ports", "mlx4_0/1", "port_rcv_data"): 2221223609},
    ),
    (
        "parse_tool_output",
        ("ibstatus",),
        {},
        "health/ibstatus/roce-2port-one-disabled.txt",
        {("ports", 0, "device"): "mlx5_0", ("ports", 0, "state"): "DOWN", ("ports", 1, "state"): "ACTIVE"},
    ),
    (
        "parse_tool_output",
        ("ibv-devinfo",),
        {},
        "health/ibv_devinfo/cx7-eth-and-ib-2hca.txt",
        {("ports", 0, "state"): "ACTIVE", ("ports", 0, "link_layer"): "Ethernet"},
    ),
    (
        "parse_tool_output",
        ("rdma-statistic",),
        {},
        "health/rdma-statistic/mlnx-iproute2-4link.txt",
        {("ports", "mlx5_0/1", "out_of_buffer"): 135},
    ),
    (
        "parse_tool_output",
        ("mlxlink",),
        {"device": "mlx5_0"},
        "health/mlxlink/mft-4.30.1-bluefield3/mlxlink-m-c.txt",
        {("device",): "mlx5_0", ("sections", "Operational Info", "State"): "Active"},
    ),
    (
        "parse_tool_output",
        ("mlxlink-json",),
        {},
        "health/mlxlink/mft-4.30.1-bluefield3/mlxlink-c-json-derived.json",
        {("sections", "Operational Info", "Speed"): "100G"},
    ),
    (
        "parse_tool_output",
        ("lctl-ping",),
        {"nid": "10.20.0.1@tcp"},
        "tools/lctl/ping_two_nids.txt",
        {("nid",): "10.20.0.1@tcp", ("reachable",): True, ("peer_nids",): ["10.20.0.1@tcp", "10.20.1.1@tcp"]},
    ),
    (
        "parse_tool_output",
        ("lctl-health-check",),
        {},
        "health/lustre/health_check_healthy_derived.txt",
        {("healthy",): True},
    ),
    (
        "parse_tool_output",
        ("lctl-list-nids",),
        {},
        "tools/lctl/list_nids_o2ib_multirail_derived.txt",
        {("nets",): ["o2ib", "o2ib1"]},
    ),
    (
        "parse_tool_output",
        ("lfs-check",),
        {},
        "tools/lfs/check_servers_2.10_active.txt",
        {("targets", 0, "state"): "active", ("targets", 0, "obd", "target"): "MDT0000"},
    ),
    (
        "parse_tool_output",
        ("lfs-df",),
        {},
        "tools/lfs/df_i_three_fs.txt",
        {("inodes",): True, ("filesystems", 0, "rows", 0, "uuid"): "tfs1-MDT0000_UUID"},
    ),
    (
        "parse_tool_output",
        ("lustre-imports",),
        {},
        "health/lustre/imports_master_full_derived.txt",
        {("imports", 0, "state"): "FULL", ("imports", 0, "current_connection"): "10.20.0.11@o2ib"},
    ),
    (
        "parse_tool_output",
        ("lustre-server-uuid",),
        {},
        "health/lustre/ost_server_uuid_derived.txt",
        {("imports", 0, "target"): "lfs1-OST0000_UUID"},
    ),
    (
        "parse_tool_output",
        ("lustre-mounts",),
        {},
        "tools/proc_mounts/lustre_2.15_fsx_options_derived.txt",
        {(0, "fsname"): "lfs1", (0, "mount_point"): "/mnt/lustre"},
    ),
    (
        "parse_tool_output",
        ("squeue",),
        {},
        "slurm/squeue/squeue_i_u_N_derived.txt",
        {("jobs", 0, "job_id"): "4101", ("jobs", 0, "nodes", 4): "gpu-su01-h07"},
    ),
    (
        "parse_tool_output",
        ("bgp-summary",),
        {"device": "leaf0"},
        "telemetry/frr/bgp-summary-7.2-sonic-t1.json",
        {("device",): "leaf0", ("local_as",): 65100, ("peers", "10.0.0.33", "remote_as"): 64001},
    ),
    (
        "parse_tool_output",
        ("routes",),
        {},
        "telemetry/frr/ip-route-8.4-unnumbered.json",
        {("routes", "10.0.0.2/32", "protocol"): "bgp"},
    ),
    (
        "parse_tool_output",
        ("lldp-table",),
        {},
        "telemetry/sonic-lldp-table/lldp_table_two_macs_mock_master.txt",
        {("neighbors", "Ethernet0", 1, "remote_port_descr"): "Second MAC", ("total",): 2},
    ),
    (
        "parse_tool_output",
        ("portstat",),
        {},
        "telemetry/sonic-portstat/counters_mock_master.txt",
        {("ports", "Ethernet0", "counters", "rx_drop"): 100, ("ports", "Ethernet0", "state", "oper"): "down"},
    ),
    (
        "parse_tool_output",
        ("portstat-json",),
        {},
        "telemetry/sonic-portstat/portstat_j_400g_derived.json",
        {("ports", "Ethernet0", "counters", "rx_ok"): 1910629135},
    ),
    (
        "parse_tool_output",
        ("pfcstat",),
        {},
        "telemetry/pfcstat/command-reference-691b1bb-example.txt",
        {("ports", "Ethernet0", "counters", "pfc3_rx"): 0},
    ),
    (
        "parse_tool_output",
        ("pfcwd",),
        {},
        "telemetry/pfcwd/issue8483-z9332-stormed.txt",
        {("ports", "Ethernet4", "state", "pfcwd3_status"): "stormed"},
    ),
    (
        "parse_tool_output",
        ("queuestat",),
        {},
        "telemetry/queuestat/sonic-utilities-691b1bb-counters.txt",
        {("ports", "Ethernet0", "counters", "q1_uc_pkts"): 60},
    ),
    (
        "parse_tool_output",
        ("intf-status",),
        {},
        "telemetry/sonic-interfaces-status/status_100g_portchannels.txt",
        {("ports", "Ethernet0", "state", "speed"): "100G"},
    ),
    (
        "parse_tool_output",
        ("intf-flap",),
        {},
        "telemetry/sonic-interfaces-flap/flap_one_port_mock_master.txt",
        {("ports", "Ethernet64", "counters", "link_state_changes"): 2},
    ),
    (
        "parse_tool_output",
        ("transceiver-dom",),
        {},
        "telemetry/sfpshow/asternos-qsfp28-sr4.txt",
        {("ports", "0/0", "gauges", "temperature_c"): 32.957},
    ),
    (
        "parse_tool_output",
        ("counters-db",),
        {},
        "telemetry/counters-db/sonic-utilities-b6af9f4-t1-dump-subset.json",
        {("ports", "Ethernet0", "counters", "rx_ok"): 40826},
    ),
    (
        "parse_tool_output",
        ("fec-histogram",),
        {"port": "Ethernet48"},
        "telemetry/sonic-fec-histogram/fec_histogram_ethernet48.txt",
        {("ports", "Ethernet48", "counters", "fec_s1_codewords"): 118358},
    ),
]


@pytest.mark.parametrize(
    ("name", "args", "options", "path", "expected"),
    CASES,
    ids=[f"{c[0]}-{c[1][0] if c[1] else 'default'}" for c in CASES],
)
def test_filter_reads_the_recorded_output(
    name: str, args: tuple[Any, ...], options: dict[str, Any], path: str, expected: dict[tuple[Any, ...], Any]
) -> None:
    out = FILTERS[name](fixture(path), *args, **options)
    assert json.loads(json.dumps(out, allow_nan=False)) == out, "plain JSON data, nothing else"
    for where, value in expected.items():
        assert dig(out, where) == value, where
    assert "status" not in (out if isinstance(out, dict) else {}), "no verdict is added"


def test_every_tool_has_a_case() -> None:
    """A tool added to the table without a case here would be untested wiring."""
    views = {
        "nvidia_smi_facts": {
            "": "nvidia-smi-xml",
            "text": "nvidia-smi-text",
            "query-gpu": "nvidia-smi-query-gpu",
            "remapped-rows": "nvidia-smi-remapped-rows",
            "nvlink-status": "nvlink-status",
        },
        "dcgm_facts": {"": "dcgm-diag-json", "diag-text": "dcgm-diag-text", "health-json": "dcgm-health-json"},
        "nccl_tests_facts": {"": "nccl-tests", "json": "nccl-tests-json"},
        "ibstat_facts": {"": "ibstat"},
        "mlxconfig_facts": {"": "mlxconfig"},
        "perftest_facts": {"": "perftest"},
        "lnetctl_facts": {"": "lnetctl-net-show"},
        "ethtool_facts": {"": "ethtool"},
    }
    covered = {
        args[0] if name == "parse_tool_output" else views[name][args[0] if args else ""] for name, args, *_ in CASES
    }
    assert covered == {*PARSERS, "mlxconfig", "mlnx-qos"}


def test_registered_result_passes_rc_and_stderr() -> None:
    """A registered command result: stdout is read, rc reaches the parsers that take an exit status (an exit status
    only makes a result worse), stderr those that read it (lnetctl prints 'LNet down' there)."""
    raw = fixture("health/nccl-tests/h100-8gpu-single-node/all_reduce_perf.out")
    clean = FILTERS["nccl_tests_facts"]({"stdout": raw, "rc": 0, "stderr": "", "changed": False})
    failed = FILTERS["nccl_tests_facts"]({"stdout": raw, "rc": 1, "stderr": "", "changed": False})
    assert clean["exit_code"] == 0 and not clean["findings"]
    assert failed["exit_code"] == 1 and failed["findings"] + failed["unknown"], "a failing exit status is a fact"
    down = FILTERS["lnetctl_facts"](
        {"stdout": "", "rc": 1, "stderr": fixture("health/lustre/lnetctl_down_2.12_lustrefs_exporter.txt")}
    )
    assert down["lnet_down"] is True and down["nis"] == []


def test_ibstat_ports_not_active_with_json_query() -> None:
    """The selection the filter docs show, with community.general's json_query (jmespath)."""
    from ansible_collections.community.general.plugins.filter.json_query import json_query

    facts = FILTERS["ibstat_facts"](fixture("health/ibstat/rdma-core-47/h100-roce-400g-down-polling.txt"))
    assert json_query(facts, "cas[].ports[?state != 'Active'][].ca") == ["mlx5_11", "mlx5_5"]  # in ibstat's order


BAD = [
    pytest.param(
        "parse_tool_output",
        ("ibstatt",),
        {},
        "x",
        r"tool 'ibstatt' is not known \(valid: bgp-summary, ",
        id="unknown-tool",
    ),
    pytest.param(
        "parse_tool_output",
        ("ibstat",),
        {"port": 1},
        "x",
        r"tool 'ibstat': option\(s\) port not taken \(valid options: version\)",
        id="option-not-taken",
    ),
    pytest.param(
        "parse_tool_output",
        ("lctl-ping",),
        {},
        "x",
        r"tool 'lctl-ping' \(lctl ping NID\) needs the option\(s\) nid",
        id="required-option",
    ),
    pytest.param(
        "nvidia_smi_facts",
        ("csv",),
        {},
        "x",
        r"view 'csv' is not one of xml, text, query-gpu, remapped-rows",
        id="unknown-view",
    ),
    pytest.param(
        "ibstat_facts",
        (),
        {},
        {"skipped": True, "changed": False},
        r"the registered task was skipped",
        id="skipped-task",
    ),
    pytest.param(
        "ibstat_facts",
        (),
        {},
        {"results": []},
        r"expected a registered command/shell result \(with 'stdout'\) or its stdout string, got a dict "
        r"with keys results",
        id="not-a-command-result",
    ),
    pytest.param(
        "ibstat_facts",
        (),
        {},
        {"stdout": "x", "rc": "1"},
        r"'rc' must be an integer exit status, got '1'",
        id="rc-not-int",
    ),
    pytest.param("ibstat_facts", (), {}, ["CA 'mlx5_0'"], r"got list", id="input-list"),
    pytest.param(
        "mlxconfig_facts",
        (),
        {},
        "-E- Unknown Parameter: FOO\n",
        r"mlxconfig output not readable: -E- Unknown Parameter: FOO",
        id="mlxconfig-error-line",
    ),
]


@pytest.mark.parametrize(("name", "args", "options", "value", "message"), BAD)
def test_bad_input_is_a_clear_error(
    name: str, args: tuple[Any, ...], options: dict[str, Any], value: Any, message: str
) -> None:
    with pytest.raises(AnsibleFilterError, match=message):
        FILTERS[name](value, *args, **options)


def test_unreadable_output_is_unknown_not_an_error() -> None:
    """hwaac parsers never raise on bad tool output: it comes back in 'unknown' (never an empty, healthy-looking
    result)."""
    out = FILTERS["nvidia_smi_facts"]("<nvidia_smi_log><gpu")
    assert out["unknown"] and out["gpus"] == []
