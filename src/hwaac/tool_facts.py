"""A recorded tool output -> its parser's facts as plain data (dicts, lists, strings, numbers), by tool name.

One entry per output format (:data:`PARSERS`), each the one hwaac parser of that format (:mod:`hwaac.health.parsers`,
:mod:`hwaac.telemetry.parsers`): nothing here reads tool output itself or judges it. The parsers' own ``findings``
and ``unknown`` are returned as they are; gpu-burn, perftest, mlxlink and nvbandwidth are read through their
grading modules (``hwaac.health.*_grading``), where those findings are decided (``graded: true`` says so).
Used by the collection's filter plugins (``docs/filters.md``).
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import PurePath
from typing import Any

from hwaac.health.gpu_burn_grading import read_gpu_burn
from hwaac.health.mlxlink_grading import read_mlxlink_json, read_mlxlink_text
from hwaac.health.nvbandwidth_grading import read_nvbandwidth
from hwaac.health.parsers import (
    dcgm,
    dcgm_health,
    dcgm_text,
    ethtool,
    ib_counters,
    ibstat,
    kernel_log,
    lctl,
    lctl_list_nids,
    lnetctl,
    lustre,
    lustre_df,
    lustre_imports,
    lustre_mounts,
    nccl_tests,
    nccl_tests_json,
    nvidia_smi,
    rdma,
    slurm_squeue,
)
from hwaac.health.perftest_grading import read_perftest
from hwaac.telemetry.parsers import frr_bgp, frr_routes, sonic_lldp_table
from hwaac.telemetry.readers import PORT_READERS, READERS


@dataclass(frozen=True)
class ToolParser:
    """One output format: its parser, the command whose output it reads, and the options a caller may give.

    Attributes:
        parse: the parser (first argument: the output text).
        reads: the command line (or file) whose output it reads, for documentation and errors.
        options: keyword options passed through (``version``, ``port``, ``nid``...).
        required: the options without which the parser cannot read (``port`` of a per-port tool).
    """

    parse: Callable[..., Any]
    reads: str
    options: tuple[str, ...] = ("version",)
    required: tuple[str, ...] = ()

    @property
    def takes_exit_code(self) -> bool:
        """Whether the parser reads the exit status (``exit_code``): it only ever makes a result worse."""
        return "exit_code" in inspect.signature(self.parse).parameters

    @property
    def takes_stderr(self) -> bool:
        """Whether the parser reads stderr too (``stderr``)."""
        return "stderr" in inspect.signature(self.parse).parameters


_SNAPSHOT_OPTIONS = ("device", "version")

PARSERS: dict[str, ToolParser] = {
    # GPUs: nvidia-smi, DCGM, burn-in tools
    "nvidia-smi-xml": ToolParser(nvidia_smi.parse_query_xml, "nvidia-smi -q -x"),
    "nvidia-smi-text": ToolParser(nvidia_smi.parse_query_text, "nvidia-smi -q"),
    "nvidia-smi-query-gpu": ToolParser(
        nvidia_smi.parse_query_gpu_csv, "nvidia-smi --query-gpu=FIELDS --format=csv", ("fields", "version")
    ),
    "nvidia-smi-remapped-rows": ToolParser(
        nvidia_smi.parse_remapped_rows_csv,
        "nvidia-smi --query-remapped-rows=FIELDS --format=csv",
        ("fields", "version"),
    ),
    "nvlink-status": ToolParser(nvidia_smi.parse_nvlink_status, "nvidia-smi nvlink -s"),
    "nvlink-errors": ToolParser(nvidia_smi.parse_nvlink_errors, "nvidia-smi nvlink -e"),
    "dcgm-diag-json": ToolParser(dcgm.parse_diag_json, "dcgmi diag -r LEVEL -j"),
    "dcgm-diag-text": ToolParser(dcgm_text.parse_diag_table, "dcgmi diag -r LEVEL"),
    "dcgm-health-json": ToolParser(dcgm_health.parse_health_json, "dcgmi health -c -j", ()),
    "gpu-burn": ToolParser(read_gpu_burn, "gpu_burn SECONDS", ()),
    "nvbandwidth": ToolParser(read_nvbandwidth, "nvbandwidth [-t TEST]"),
    "nccl-tests": ToolParser(nccl_tests.parse_nccl_tests, "all_reduce_perf (nccl-tests, any *_perf) stdout"),
    "nccl-tests-json": ToolParser(nccl_tests_json.parse_nccl_tests_json, "the file nccl-tests -J FILE writes"),
    "kernel-log": ToolParser(kernel_log.parse_kernel_log, "journalctl -k -o short-iso, or dmesg", ("year", "version")),
    # NICs and RDMA
    "ibstat": ToolParser(ibstat.parse_ibstat, "ibstat"),
    "ib-counters": ToolParser(
        ib_counters.parse_ib_counters, "grep -H . /sys/class/infiniband/*/ports/*/counters/* .../hw_counters/*"
    ),
    "ibstatus": ToolParser(rdma.parse_ibstatus, "ibstatus"),
    "ibv-devinfo": ToolParser(rdma.parse_ibv_devinfo, "ibv_devinfo [-v]", ("port", "version")),
    "rdma-statistic": ToolParser(rdma.parse_rdma_statistic, "rdma statistic show"),
    "perftest": ToolParser(read_perftest, "ib_write_bw / ib_read_bw / ib_send_bw / *_lat (client side)"),
    "ethtool": ToolParser(ethtool.parse_ethtool_stats, "ethtool -S NETDEV", ("netdev", "version")),
    "mlxlink": ToolParser(read_mlxlink_text, "mlxlink -d DEV -c", ("device", "counters_expected", "version")),
    "mlxlink-json": ToolParser(
        read_mlxlink_json, "mlxlink -d DEV -c --json", ("device", "counters_expected", "version")
    ),
    # Lustre clients and Slurm
    "lnetctl-net-show": ToolParser(lnetctl.parse_lnet_net_show, "lnetctl net show -v 2", ()),
    "lctl-ping": ToolParser(lctl.parse_lctl_ping, "lctl ping NID", ("nid",), ("nid",)),
    "lctl-health-check": ToolParser(lctl.parse_health_check, "lctl get_param -n health_check", ()),
    "lctl-list-nids": ToolParser(lctl_list_nids.parse_lctl_list_nids, "lctl list_nids", ()),
    "lfs-check": ToolParser(lustre.parse_lfs_check, "lfs check servers"),
    "lfs-df": ToolParser(lustre_df.parse_lfs_df, "lfs df [-i]"),
    "lustre-imports": ToolParser(lustre_imports.parse_imports, "lctl get_param osc.*.import mdc.*.import", ()),
    "lustre-server-uuid": ToolParser(
        lustre_imports.parse_server_uuid, "lctl get_param osc.*.ost_server_uuid mdc.*.mds_server_uuid", ()
    ),
    "lustre-mounts": ToolParser(lustre_mounts.parse_lustre_mounts, "cat /proc/mounts", ()),
    "squeue": ToolParser(slurm_squeue.parse_squeue, "squeue -h -o '%i %u %N'"),
    # switches: FRR and SONiC (the tool names of hwaac/telemetry/tools.py)
    "bgp-summary": ToolParser(frr_bgp.parse_bgp_summary, "vtysh -c 'show bgp summary json'", _SNAPSHOT_OPTIONS),
    "routes": ToolParser(frr_routes.parse_routes, "vtysh -c 'show ip route json'", _SNAPSHOT_OPTIONS),
    "lldp-table": ToolParser(sonic_lldp_table.parse_lldp_table, "show lldp table", _SNAPSHOT_OPTIONS),
}
"""Tool name -> its parser. The switch and NIC telemetry readers of :mod:`hwaac.telemetry.readers` are added below
under their own tool names, except where a GPU-node parser above already reads the format (``ethtool``,
``mlxlink``, ``rdma-statistic``, ``ib-counters``: those keep every counter, the telemetry readers only the ones
they rate)."""

for _name, (_reader, _command) in READERS.items():
    PARSERS.setdefault(_name, ToolParser(_reader, _command, _SNAPSHOT_OPTIONS))
for _name, (_reader, _command) in PORT_READERS.items():
    PARSERS.setdefault(_name, ToolParser(_reader, _command, ("port", *_SNAPSHOT_OPTIONS), ("port",)))


def plain(value: Any) -> Any:
    """``value`` as JSON-ready data: dataclasses and plain objects as dicts of their fields (properties and
    methods left out), enums as their name (or string value), sets sorted, tuples as lists, mapping keys as
    strings (:func:`_key`), dates in ISO 8601, bytes as text; non-finite floats as None (JSON has no NaN)."""
    if isinstance(value, enum.Enum):  # before int and str: IntEnum and StrEnum are both
        return value.value if isinstance(value.value, str) else value.name
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {_key(k): plain(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted((plain(v) for v in value), key=str)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, PurePath):
        return str(value)
    if hasattr(value, "__dict__"):
        return {k: plain(v) for k, v in vars(value).items() if not k.startswith("_")}
    raise TypeError(f"cannot turn a {type(value).__name__} into plain data")


def _key(key: Any) -> str:
    """A mapping key as text; a key of several parts (an RDMA device and its port) joined with ``/``: ``mlx5_0/1``,
    the way hwaac names a host port elsewhere (:meth:`hwaac.telemetry.topology.LinkIndex.find`)."""
    if isinstance(key, tuple):
        return "/".join(_key(part) for part in key)
    value = plain(key)
    return value if isinstance(value, str) else str(value)


def tool_facts(
    tool: str,
    stdout: str,
    *,
    rc: int | None = None,
    stderr: str = "",
    parsers: Mapping[str, ToolParser] = PARSERS,
    **options: Any,
) -> dict[str, Any] | list[Any]:
    """The facts ``parsers[tool]`` reads from ``stdout`` (with ``rc`` and ``stderr`` where that parser reads
    them), as :func:`plain` data.

    Raises:
        ValueError: an unknown tool, an option the tool does not take, a required option missing, or ``stdout``
            not text (each message names the tool, the option or value, and what is valid).
    """
    spec = parsers.get(tool)
    if spec is None:
        raise ValueError(f"tool {tool!r} is not known (valid: {', '.join(sorted(parsers))})")
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        allowed = ", ".join(spec.options) or "none"
        raise ValueError(f"tool {tool!r}: option(s) {', '.join(unknown)} not taken (valid options: {allowed})")
    missing = [o for o in spec.required if options.get(o) in (None, "")]
    if missing:
        raise ValueError(f"tool {tool!r} ({spec.reads}) needs the option(s) {', '.join(missing)}")
    if not isinstance(stdout, str):
        raise ValueError(f"tool {tool!r}: the output must be text, got {type(stdout).__name__}")
    kwargs = {k: v for k, v in options.items() if v is not None}
    if spec.takes_exit_code:
        kwargs["exit_code"] = rc
    if spec.takes_stderr:
        kwargs["stderr"] = stderr or ""
    return plain(spec.parse(stdout, **kwargs))
