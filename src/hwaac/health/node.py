"""One node's health: which tools each stage runs, and how their raw output becomes a verdict.

The formats, sources and rules in full: ``docs/health-modules.md``, section "Node stages and verdict".
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from hwaac.health import checks, checks_nic, checks_rdma
from hwaac.health.parsers import (
    dcgm,
    ib_counters,
    ibstat,
    kernel_log,
    nccl_tests,
    nvbandwidth,
    nvidia_smi,
    perftest,
    rdma,
)
from hwaac.health.parsers.base import with_stderr
from hwaac.health.parsers.growth import port_counter_growth
from hwaac.health.profile import Profile
from hwaac.health.result import Action, Finding, Status, strongest

# nvidia-smi exit codes (Azure azurehpc-health-checks csc_nvidia_smi.nhc)
NVIDIA_SMI_EXIT: dict[int, tuple[str, Status, Action, str]] = {
    2: ("PROBE_USAGE", Status.UNKNOWN, Action.RETEST, "invalid argument (tool version?)"),
    4: ("PROBE_PERMISSION", Status.UNKNOWN, Action.RETEST, "permission denied"),
    8: ("GPU_POWER_CABLES", Status.FAIL, Action.RMA, "external power cables not attached"),
    9: ("GPU_DRIVER_NOT_LOADED", Status.FAIL, Action.REBOOT, "NVIDIA driver not loaded"),
    12: ("GPU_NVML_MISSING", Status.FAIL, Action.REBOOT, "NVML shared library not found"),
    14: ("GPU_INFOROM_CORRUPTED", Status.FAIL, Action.RMA, "infoROM corrupted"),
    15: ("GPU_FALLEN_OFF_BUS", Status.FAIL, Action.REBOOT, "a GPU has fallen off the bus"),
}


@dataclass(frozen=True)
class Context:
    """What a node's evaluation needs besides the outputs.

    Attributes:
        node: the node's name. now: the evaluation time (UTC). rails: the node's rail RDMA devices in rail order
            (``mlx5_0``...; from its rendered ``nic-roce.json``), default: every port of the profile's link layer.
        under_load: the quick checks run while GPUs are busy (PCIe generation is then checked).
        nccl_algo / nodes: how the multi-node NCCL run was started.
        counters_before / counters_seconds: the earlier port-counter reading (raw) and seconds since it.
        rdma_statistic_before: the earlier ``rdma statistic show`` reading (raw), read with ``counters_before``
            (the same stage, seconds apart), so ``counters_seconds`` is its age too.
    """

    node: str
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    rails: tuple[str, ...] | None = None
    under_load: bool = False
    nccl_algo: str | None = None
    nodes: int | None = None
    counters_before: str | None = None
    counters_seconds: float | None = None
    rdma_statistic_before: str | None = None
    uptime_s: float | None = None
    # parse results of this evaluation by probe name, shared with hardware_ids (an 8-GPU nvidia-smi XML is ~200 KB:
    # parsing it once per node, not three times, is what keeps 1,000 nodes within seconds)
    parsed: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def _memo(ctx: Context, key: str, parse: Callable[[], Any]) -> Any:
    if key not in ctx.parsed:
        ctx.parsed[key] = parse()
    return ctx.parsed[key]


IB_PORT_BASE = 18515  # perftest's default port; rail r listens on IB_PORT_BASE + r
# the rails as the verbs stack and the RDMA netlink see them (besides ibstat and sysfs counters): quick and health
RDMA_PROBES = ("ibstatus", "ibv_devinfo", "rdma_statistic")


def commands(
    stage: str,
    profile: Profile,
    *,
    sysfs_root: str = "/sys",
    rails: list[str] | None = None,
    peer: str | None = None,
    mpi_hosts: list[str] | None = None,
    nccl_algo: str = "RING",
    gpus: int | None = None,
) -> dict[str, list[str]]:
    """The probes of ``stage``: probe name -> argv (run without a shell, except ``ib_counters`` which needs the
    sysfs glob). ``ib_serve`` and ``ib_pairwise`` need ``rails``; ``ib_pairwise`` the ``peer`` node whose servers
    listen (rail r on port 18515 + r); ``nccl_multi`` the ``mpi_hosts`` (this node first).

    Raises:
        KeyError: an unknown stage, or a stage without what it needs (the message names it).
    """
    window = profile.xid_window_seconds
    kernel = ["journalctl", "-k", "-o", "short-iso", "--no-pager", "--since", f"-{window}s"]
    counters = [
        "sh",
        "-c",
        f"grep -H . {sysfs_root}/class/infiniband/*/ports/*/counters/* "
        f"{sysfs_root}/class/infiniband/*/ports/*/hw_counters/*",
    ]
    nccl = profile.performance.nccl_allreduce_single_node_busbw_gbytes_per_s.method
    if stage == "quick":
        return {
            "nvidia_smi": ["nvidia-smi", "-q", "-x"],
            "remapped_rows": [
                "nvidia-smi",
                "--query-remapped-rows=gpu_bus_id,gpu_uuid,remapped_rows.correctable,"
                "remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure",
                "--format=csv",
            ],
            "nvlink_status": ["nvidia-smi", "nvlink", "-s"],
            "nvlink_errors": ["nvidia-smi", "nvlink", "-e"],
            "kernel_log": kernel,
            "ibstat": ["ibstat"],
            "ib_counters": counters,
            "ibstatus": ["ibstatus"],
            "ibv_devinfo": ["ibv_devinfo"],
            "rdma_statistic": ["rdma", "statistic", "show"],
        }
    if stage == "dcgm":
        return {"dcgm_diag": ["dcgmi", "diag", "-r", str(profile.dcgm.burn_in_level), "-j"]}
    if stage == "single_node":
        args = nccl.args.split() if nccl.args else ["-b", "16G", "-e", "16G", "-f", "2", "-g", str(gpus or 8)]
        bw = profile.performance
        return {
            "nccl_single": ["all_reduce_perf", *args],
            "nvbandwidth": [
                "nvbandwidth",
                "-t",
                bw.host_to_device_gbytes_per_s.method.test or "",
                "-t",
                bw.device_to_device_gbytes_per_s.method.test or "",
            ],
        }
    if stage in ("ib_serve", "ib_pairwise"):
        if not rails or (stage == "ib_pairwise" and not peer):
            raise KeyError(f"{stage} needs the node's rails" + (" and a peer" if stage == "ib_pairwise" else ""))
        m = profile.performance.ib_write_bw_per_port_gbits_per_s.method
        out = {}
        for i, dev in enumerate(rails):
            args = [a.replace("<gpu>", str(i)) for a in m.args.split()]
            if stage == "ib_serve":
                out[f"ib_serve_{dev}"] = ["ib_write_bw", "-d", dev, "-p", str(IB_PORT_BASE + i), *args]
            else:
                out[f"ib_write_bw_{dev}"] = ["ib_write_bw", "-d", dev, "-p", str(IB_PORT_BASE + i), *args, str(peer)]
        if stage == "ib_pairwise":
            out["ibstat"] = ["ibstat"]  # this node's ports now: a failed pair is this node's fault only if so
            out["ib_counters"] = counters
            out["rdma_statistic"] = ["rdma", "statistic", "show"]  # the hw counters' growth over the pair test
        return out
    if stage == "nccl_multi":
        if not mpi_hosts:
            raise KeyError("nccl_multi needs the hosts of the run")
        multi = profile.performance.nccl_allreduce_multi_node_busbw_gbytes_per_s.method
        per_node = gpus or profile.gpu.count
        args = multi.args.split() if multi.args else ["-b", "16G", "-e", "16G", "-f", "2", "-g", "1"]
        return {
            "nccl_multi": [
                "mpirun",
                "-np",
                str(per_node * len(mpi_hosts)),
                "-H",
                ",".join(f"{h}:{per_node}" for h in mpi_hosts),
                "-x",
                f"NCCL_ALGO={nccl_algo}",
                "--tag-output",
                "all_reduce_perf",
                *args,
            ]
        }
    if stage == "health":
        quick = commands("quick", profile, sysfs_root=sysfs_root)
        return {
            "nvidia_smi": ["nvidia-smi", "-q", "-x"],
            "remapped_rows": quick["remapped_rows"],
            "kernel_log": kernel,
            "ibstat": ["ibstat"],
            "ib_counters": counters,
            **{name: quick[name] for name in RDMA_PROBES},
            "dcgm_diag": ["dcgmi", "diag", "-r", str(profile.dcgm.health_check_level), "-j"],
        }
    raise KeyError(f"unknown stage {stage!r}")


def _probe_problem(name: str, out: Mapping[str, Any]) -> Finding | None:
    if out.get("timed_out"):
        return Finding(
            "PROBE_TIMEOUT",
            Status.UNKNOWN,
            f"{name}: timed out after {out.get('seconds', 0):.0f} s",
            action=Action.RETEST,
        )
    if out.get("rc") is None:
        return Finding(
            "PROBE_NOT_RUN",
            Status.UNKNOWN,
            f"{name}: could not start ({out.get('stderr', '')[:200]})",
            action=Action.RETEST,
        )
    return None


def _exit_finding(name: str, tool_rc: int, stderr: str) -> Finding:
    if name.startswith(("nvidia_smi", "remapped_rows", "nvlink")) and tool_rc in NVIDIA_SMI_EXIT:
        code, status, action, what = NVIDIA_SMI_EXIT[tool_rc]
        return Finding(code, status, f"{name}: nvidia-smi exit {tool_rc}: {what}", evidence=stderr[:400], action=action)
    return Finding("PROBE_EXIT", Status.UNKNOWN, f"{name}: exit {tool_rc}", evidence=stderr[:400], action=Action.RETEST)


def evaluate(outputs: Mapping[str, Mapping[str, Any]], profile: Profile, ctx: Context) -> list[Finding]:
    """Parse every probe output and check it against the profile; findings carry the node-level subject."""
    found: list[Finding] = []
    pairs: list[tuple[int, str, str, int, str]] = []  # the pair tests (where they stand, name, stdout, rc, stderr)
    nvlink_status = None
    for name, out in outputs.items():
        if name.startswith("ib_serve_"):
            continue  # the server side of a pair: its client judges the link
        problem = _probe_problem(name, out)
        if problem:
            found.append(problem)
            continue
        raw, rc, err = out.get("stdout") or "", out["rc"], out.get("stderr") or ""
        if name.startswith("ib_write_bw_"):
            pairs.append((len(found), name, raw, rc, err))
            continue
        if name == "nvlink_status":
            nvlink_status = nvidia_smi.parse_nvlink_status(raw)
            if rc:
                found.append(_exit_finding(name, rc, err))
            continue
        if name == "nvlink_errors":
            errors = nvidia_smi.parse_nvlink_errors(raw)
            # -e is judged with -s (which must come first), or alone when -s was not read
            found += checks.check_nvlink(nvlink_status, errors, profile)
            nvlink_status = None
            if rc:
                found.append(_exit_finding(name, rc, err))
            continue
        handler = _HANDLERS.get(name)
        if handler is None:
            raise KeyError(f"unknown probe {name!r}")
        found += handler(name, raw, rc, err, profile, ctx)
    if nvlink_status is not None:  # -s without -e
        found += checks.check_nvlink(nvlink_status, None, profile)
    # the pair tests last, each in its place: whether a failed pair is this node's fault takes its own ports' facts
    clean = _clean_ports(outputs, found, ctx) if pairs else set()
    for at, name, raw, rc, err in reversed(pairs):
        found[at:at] = _ib_write_bw(name, raw, rc, err, profile, clean)
    return found


def _clean_ports(outputs: Mapping[str, Mapping[str, Any]], found: list[Finding], ctx: Context) -> set[str]:
    """This node's ports that are up in ``ibstat`` and that no finding fails (none without ``ibstat``)."""
    if "ibstat" not in outputs:
        return set()
    ib = _memo(ctx, "ibstat", lambda: ibstat.parse_ibstat(outputs["ibstat"].get("stdout") or ""))
    up = {f"{ca.name} port {p.number}": p.is_up for ca in ib.cas for p in ca.ports}
    return {subject for subject, is_up in up.items() if is_up} - {f.subject for f in found if f.status == Status.FAIL}


Handler = Callable[[str, str, int, str, Profile, Context], list[Finding]]


def _nvidia_smi(name: str, raw: str, rc: int, err: str, profile: Profile, ctx: Context) -> list[Finding]:
    q = _memo(ctx, name, lambda: nvidia_smi.parse_query_xml(raw))
    out = checks.check_gpus(q, profile, under_load=ctx.under_load)
    return [*out, _exit_finding(name, rc, err)] if rc else out


def _remapped(name: str, raw: str, rc: int, err: str, profile: Profile, ctx: Context) -> list[Finding]:
    out = checks.check_remapped_rows(nvidia_smi.parse_remapped_rows_csv(raw), profile)
    return [*out, _exit_finding(name, rc, err)] if rc else out


def _kernel(name: str, raw: str, rc: int, err: str, profile: Profile, ctx: Context) -> list[Finding]:
    since = ctx.now - timedelta(seconds=profile.xid_window_seconds)
    up = None if ctx.uptime_s is None else ctx.uptime_s - profile.xid_window_seconds
    log = kernel_log.parse_kernel_log(raw, year=ctx.now.year, since=since, since_uptime_s=up)
    if raw.strip() in ("", "-- No entries --") and rc == 0:
        return []  # journalctl found nothing in the window: nothing happened
    out = checks.check_kernel_log(log)
    return [*out, _exit_finding(name, rc, err)] if rc else out


def _ibstat(name: str, raw: str, rc: int, err: str, profile: Profile, ctx: Context) -> list[Finding]:
    ib = _memo(ctx, name, lambda: ibstat.parse_ibstat(raw + ("\n" + err if "ibpanic" in err else "")))
    out = checks_nic.check_ibstat(ib, profile, ctx.rails)
    return [*out, _exit_finding(name, rc, err)] if rc and "ibpanic" not in err else out


def _counters(name: str, raw: str, rc: int, err: str, profile: Profile, ctx: Context) -> list[Finding]:
    after = _memo(ctx, name, lambda: _counters_of(raw))
    out = checks_nic.check_ib_counters(after, ctx.rails)
    if ctx.counters_before is not None:
        before = _counters_of(ctx.counters_before)
        # without the interval only the deltas are judged (a rate needs seconds > 0)
        growth = port_counter_growth(before, after, ctx.counters_seconds or 0)
        if ctx.rails is not None:
            growth = {k: v for k, v in growth.items() if k[0] in ctx.rails}
        out += checks_nic.check_counter_growth(growth, profile)
    return out  # grep exits 2 when a glob matches nothing: the parser says what is missing


def _rdma_ports(name: str, raw: str, rc: int, err: str, profile: Profile, ctx: Context) -> list[Finding]:
    parse = rdma.parse_ibstatus if name == "ibstatus" else rdma.parse_ibv_devinfo
    ports = _memo(ctx, name, lambda: parse(with_stderr(raw, err)))  # their errors go to stderr
    out = checks_rdma.check_rdma_ports(ports, profile, ctx.rails)
    return [*out, _exit_finding(name, rc, err)] if rc and not ports.no_devices else out


def _rdma_statistic(name: str, raw: str, rc: int, err: str, profile: Profile, ctx: Context) -> list[Finding]:
    stat = _memo(ctx, name, lambda: rdma.parse_rdma_statistic(with_stderr(raw, err)))
    if ctx.rdma_statistic_before is None:
        out = checks_rdma.check_rdma_statistic(stat, ctx.rails)
    else:  # without the interval only the deltas are judged, as for the sysfs counters
        before = _memo(ctx, f"{name}_before", lambda: rdma.parse_rdma_statistic(ctx.rdma_statistic_before or ""))
        out = checks_rdma.check_rdma_statistic_growth(before, stat, ctx.counters_seconds or 0, profile, ctx.rails)
    return [*out, _exit_finding(name, rc, err)] if rc else out


@functools.lru_cache(maxsize=8)
def _counters_of(raw: str) -> ib_counters.IbCountersResult:
    """Port counters parsed once per text: a stage's reading is the next stage's ``counters_before`` (read only)."""
    return ib_counters.parse_ib_counters(raw)


def _dcgm(name: str, raw: str, rc: int, err: str, profile: Profile, ctx: Context) -> list[Finding]:
    return checks.check_dcgm(dcgm.parse_diag_json(raw, exit_code=rc))


def _nccl(name: str, raw: str, rc: int, err: str, profile: Profile, ctx: Context) -> list[Finding]:
    perf = profile.performance
    multi = name == "nccl_multi"
    th = (
        perf.nccl_allreduce_multi_node_busbw_gbytes_per_s
        if multi
        else perf.nccl_allreduce_single_node_busbw_gbytes_per_s
    )
    return checks.check_nccl(
        nccl_tests.parse_nccl_tests(raw, exit_code=rc),
        th,
        nccl_algo=ctx.nccl_algo,
        nodes=ctx.nodes if multi else 1,
        subject="" if not multi else "su",
    )


def _nvbandwidth(name: str, raw: str, rc: int, err: str, profile: Profile, ctx: Context) -> list[Finding]:
    out = checks.check_nvbandwidth(nvbandwidth.parse_nvbandwidth(raw), profile)
    return [*out, _exit_finding(name, rc, err)] if rc else out


def _ib_write_bw(name: str, raw: str, rc: int, err: str, profile: Profile, clean: set[str]) -> list[Finding]:
    subject = f"{name.removeprefix('ib_write_bw_')} port 1"
    res = perftest.parse_perftest(with_stderr(raw, err), exit_code=rc)
    return checks_rdma.check_pair_perftest(
        res, profile.performance.ib_write_bw_per_port_gbits_per_s, subject=subject, port_clean=subject in clean
    )


_HANDLERS: dict[str, Handler] = {
    "nvidia_smi": _nvidia_smi,
    "remapped_rows": _remapped,
    "kernel_log": _kernel,
    "ibstat": _ibstat,
    "ib_counters": _counters,
    "dcgm_diag": _dcgm,
    "nccl_single": _nccl,
    "nccl_multi": _nccl,
    "nvbandwidth": _nvbandwidth,
    "ibstatus": _rdma_ports,
    "ibv_devinfo": _rdma_ports,
    "rdma_statistic": _rdma_statistic,
}


@dataclass
class NodeVerdict:
    """A node's verdict over the stages run so far.

    Attributes:
        node: name. status: worst finding (PASS when none). action: the strongest action of the findings at the
        verdict's status (UNKNOWN alone -> retest). findings: deduplicated by (code, subject), worst kept.
        stages: stage -> its worst status.
    """

    node: str
    status: Status
    action: Action
    findings: list[Finding]
    stages: dict[str, Status]

    @property
    def codes(self) -> list[str]:
        return sorted({f.code for f in self.findings if f.status > Status.PASS})

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "status": str(self.status),
            "action": self.action.value,
            "codes": self.codes,
            "stages": {k: str(v) for k, v in self.stages.items()},
            "findings": [
                {
                    "code": f.code,
                    "status": str(f.status),
                    "message": f.message,
                    "subject": f.subject,
                    "evidence": f.evidence,
                    "action": f.action.value,
                }
                for f in self.findings
            ],
        }


def verdict(node: str, by_stage: Mapping[str, list[Finding]]) -> NodeVerdict:
    """Combine stages' findings into the node verdict (see :class:`NodeVerdict`)."""
    best: dict[tuple[str, str], Finding] = {}
    stages: dict[str, Status] = {}
    for stage, found in by_stage.items():
        stages[stage] = max((f.status for f in found), default=Status.PASS)
        for f in found:
            key = (f.code, f.subject)
            if key not in best or f.status > best[key].status:
                best[key] = f
    findings = sorted(best.values(), key=lambda f: (-f.status, f.code, f.subject))
    status = max((f.status for f in findings), default=Status.PASS)
    action = strongest([f.action for f in findings if f.status == status]) if findings else Action.NONE
    if status == Status.UNKNOWN and action == Action.NONE:
        action = Action.RETEST
    return NodeVerdict(node, status, action, findings, stages)


def hardware_ids(
    outputs: Mapping[str, Mapping[str, Any]], parsed: Mapping[str, Any] | None = None
) -> dict[str, dict[str, str]]:
    """Serials for the evidence of an RMA: ``{"gpus": {"gpu0 <bus id>": serial}, "nics": {dev: node GUID}}`` from
    the ``nvidia_smi`` and ``ibstat`` outputs present (empty where a tool did not run or printed none).
    ``parsed``: :attr:`Context.parsed` of the evaluation of the same outputs, to parse nothing twice."""
    parsed = parsed or {}
    ids: dict[str, dict[str, str]] = {"gpus": {}, "nics": {}}
    smi = outputs.get("nvidia_smi")
    if smi and smi.get("stdout"):
        q = parsed.get("nvidia_smi") or nvidia_smi.parse_query_xml(smi["stdout"])
        for g in q.gpus:
            if g.serial:
                ids["gpus"][g.subject] = g.serial
    ib = outputs.get("ibstat")
    if ib and ib.get("stdout"):
        for ca in (parsed.get("ibstat") or ibstat.parse_ibstat(ib["stdout"])).cas:
            if ca.node_guid:
                ids["nics"][ca.name] = ca.node_guid
    return ids
