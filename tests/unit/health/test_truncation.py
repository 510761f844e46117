"""Every fixture of the Lustre and RDMA formats, cut at ten points (after whole lines and inside the next), reads as
incomplete or as exactly the whole text's items. A cut that is also a complete output of fewer records is listed in
:data:`INDISTINGUISHABLE` with its reason and a witness; there the items read must still be the whole text's
(docs/health-parsers.md, "Output cut short")."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils import lnet as host_lnet
from hwaac.health.parsers import (
    ibstat,
    lctl,
    lctl_list_nids,
    lnetctl,
    lustre,
    lustre_df,
    lustre_formats,
    lustre_imports,
    lustre_mounts,
    mlxlink,
    perftest,
    rdma,
)

FIX = Path(__file__).parents[2] / "fixtures"
CUTS = 10

Items = list[tuple]


# --- what each reader reads: (incomplete, the items in output order) ---------------------------------------------


def _imports(text: str) -> tuple[bool, Items]:
    r = lustre_imports.parse_imports(text)
    return r.incomplete, [
        *(
            (i.obd.name, i.target, i.state, i.current_connection, tuple(i.failover_nids), tuple(i.flags), i.deactivated)
            for i in r.imports
        ),
        *(("no such parameter", p) for p in r.missing_params),
    ]


def _server_uuid(text: str) -> tuple[bool, Items]:
    r = lustre_imports.parse_server_uuid(text)
    return r.incomplete, [(i.obd.name, i.target, i.state, i.deactivated) for i in r.imports]


def _health_check(text: str) -> tuple[bool, Items]:
    r = lctl.parse_health_check(text)
    words = [
        w for w, said in (("LBUG", r.lbug), ("NOT HEALTHY", r.not_healthy), ("healthy", r.healthy is True)) if said
    ]
    return r.incomplete, [*((w,) for w in words), *(("device", d) for d in r.unhealthy_devices)]


def _ping(text: str) -> tuple[bool, Items]:
    r = lctl.parse_lctl_ping(text, nid="10.20.0.1@o2ib")
    return r.incomplete, [*([("failed", r.error)] if r.reachable is False else []), *((n,) for n in r.peer_nids)]


def _list_nids(text: str) -> tuple[bool, Items]:
    r = lctl_list_nids.parse_lctl_list_nids(text)
    return r.incomplete, [*([("LNet down",)] if r.lnet_down else []), *((n,) for n in r.nids)]


def _lnet(text: str) -> tuple[bool, Items]:
    """The NI facts the checks judge (the interface only names the NI in a finding)."""
    r = lnetctl.parse_lnet_net_show(text)
    return r.incomplete, [
        *([("LNet down",)] if r.lnet_down else []),
        *((n.net, n.nid, n.status, n.health_value, n.fatal_error) for n in r.nis),
    ]


def _lnet_export(text: str) -> tuple[bool, Items]:
    """What the lnet host module configures from (``export --backup``): it fails on output it cannot read or that
    is cut short."""
    try:
        state = host_lnet.parse_state(text)
    except host_lnet.LnetError:
        return True, []
    return host_lnet.cut_reason(text, export=True) is not None, [
        (
            net["net"],
            ni["interface"],
            ni["nid"],
            ni["status"],
            tuple(sorted(ni["tunables"].items())),
            tuple(sorted(ni["lnd_tunables"].items())),
        )
        for net in state["nets"]
        for ni in net["nis"]
    ]


def _lfs_check(text: str) -> tuple[bool, Items]:
    r = lustre.parse_lfs_check(text)
    return r.incomplete, [
        *([("not mounted",)] if r.not_mounted else []),
        *((t.obd.name, t.state, t.error, t.errno) for t in r.targets),
    ]


def _lfs_df(text: str) -> tuple[bool, Items]:
    r = lustre_df.parse_lfs_df(text)
    return r.incomplete, [
        (row.uuid, row.total, row.used, row.available, row.use_pct, row.mount_point, row.state, row.error)
        for fs in r.filesystems
        for row in [*fs.rows, *filter(None, [fs.summary])]
    ]


def _mounts(text: str) -> tuple[bool, Items]:
    return lustre_formats.proc_mounts_cut(text) is not None, [
        (m.source, m.mount_point, m.options) for m in lustre_mounts.parse_lustre_mounts(text)
    ]


def _ibstat(text: str) -> tuple[bool, Items]:
    r = ibstat.parse_ibstat(text)
    return r.incomplete, [
        *([("ibpanic", r.panic, r.failed_device)] if r.panic is not None else []),
        *((p.ca, p.number, p.state, p.physical_state, p.rate_gbps, p.link_layer) for p in r.ports()),
    ]


def _rdma_ports(parse: Callable[[str], rdma.RdmaPortsResult]) -> Callable[[str], tuple[bool, Items]]:
    def read(text: str) -> tuple[bool, Items]:
        r = parse(text)
        return r.incomplete, [
            *([("no devices",)] if r.no_devices else []),
            *((p.device, p.port, p.state_code, p.phys_code, p.rate_gbps, p.link_layer) for p in r.ports),
        ]

    return read


def _ibv_devinfo_port_2(text: str) -> tuple[bool, Items]:
    """The recording ran with ``-i 2``: each device prints port 2 only."""
    return _rdma_ports(lambda raw: rdma.parse_ibv_devinfo(raw, port=2))(text)


def _rdma_statistic(text: str) -> tuple[bool, Items]:
    r = rdma.parse_rdma_statistic(text)
    return r.incomplete, [(*key, name, value) for key, counters in r.ports.items() for name, value in counters.items()]


def _mlxlink(parse: Callable[[str], mlxlink.MlxlinkResult]) -> Callable[[str], tuple[bool, Items]]:
    def read(text: str) -> tuple[bool, Items]:
        r = parse(text)
        return r.incomplete, [
            (
                r.state,
                r.physical_state,
                r.speed,
                r.width_lanes,
                r.fec,
                r.status_opcode,
                r.effective_physical_errors,
                r.effective_physical_ber,
                r.raw_physical_ber,
                tuple(r.raw_physical_errors_per_lane),
                r.link_down_counter,
                r.link_error_recovery_counter,
            )
        ]

    return read


def _perftest(text: str) -> tuple[bool, Items]:
    """The rows measured and whether perftest reported an error. Which of perftest's error codes a line cut inside
    an error message matches may change (a partial message falls back to the generic ``PERFTEST_ERROR``, action
    retest); that the run reported an error does not."""
    r = perftest.parse_perftest(text)
    return r.incomplete, [
        ("reported an error", bool(r.errors)),
        *((row.line,) for row in r.bw_rows),
        *((row.line,) for row in r.lat_rows),
    ]


@dataclass(frozen=True)
class Format:
    name: str
    read: Callable[[str], tuple[bool, Items]]
    globs: tuple[str, ...]

    def files(self) -> list[Path]:
        found = sorted({p for g in self.globs for p in FIX.glob(g)})
        assert found, f"{self.name}: no fixture matches {self.globs}"
        return found


FORMATS = [
    Format("lctl get_param osc.*.import", _imports, ("health/lustre/import*.txt", "tools/lctl/osc_import_*.txt")),
    Format("lctl get_param *_server_uuid", _server_uuid, ("health/lustre/*server_uuid*.txt",)),
    Format("lctl get_param health_check", _health_check, ("health/lustre/health_check_*.txt",)),
    Format("lctl ping", _ping, ("health/lustre/lctl_ping_*.txt", "tools/lctl/ping_*.txt")),
    Format("lctl list_nids", _list_nids, ("tools/lctl/list_nids_*.txt",)),
    Format("lnetctl net show", _lnet, ("health/lustre/lnetctl_*.txt", "tools/lnetctl/*/net_show*.txt")),
    Format("lnetctl export --backup (host)", _lnet_export, ("tools/lnetctl/*/export_backup*.txt",)),
    Format("lfs check servers", _lfs_check, ("tools/lfs/check_*.txt", "tools/lfs/check_*.std*")),
    Format("lfs df", _lfs_df, ("tools/lfs/df_*.txt",)),
    Format("/proc/mounts", _mounts, ("tools/proc_mounts/*.txt",)),
    Format("ibstat", _ibstat, ("health/ibstat/*/*.txt",)),
    Format("ibstatus", _rdma_ports(rdma.parse_ibstatus), ("health/ibstatus/*.txt",)),
    Format(
        "ibv_devinfo",
        _rdma_ports(rdma.parse_ibv_devinfo),
        ("health/ibv_devinfo/*-2hca*.txt", "health/ibv_devinfo/rxe-*.txt"),
    ),
    Format("ibv_devinfo -i 2", _ibv_devinfo_port_2, ("health/ibv_devinfo/*-port2-*.txt",)),
    Format("rdma statistic show", _rdma_statistic, ("health/rdma-statistic/*.txt",)),
    Format("mlxlink --json", _mlxlink(mlxlink.parse_mlxlink_json), ("health/mlxlink/*/*.json",)),
    Format("mlxlink", _mlxlink(mlxlink.parse_mlxlink_text), ("health/mlxlink/*/*.txt",)),
    Format("perftest", _perftest, ("health/perftest/*/*.out",)),
]

# fixtures whose whole text already reads as incomplete (so every cut of them does too), and why
WHOLE_INCOMPLETE = {
    "import_2.12.7_idle.txt": "the recorded value stops after service_estimates, where 2.12.7 prints transactions",
    "osc_import_2.12.7.txt": "the same recorded value, without the lctl header",
    "health_check_not_loaded_derived.txt": "Lustre not loaded: health_check cannot be read",
    "df_truncated_derived.txt": "a table cut short, on purpose",
    "mlxlink-ber-monitor-unsupported.txt": "mlxlink refused the BER monitor option and printed no counters",
    "mlxlink-c-grep.txt": "grep-filtered counters of eight HCAs with the loop's banners: not one mlxlink output",
}


# --- the cuts ------------------------------------------------------------------------------------------------------


def cuts(text: str) -> list[tuple[str, str, bool]]:
    """(label, cut text, inside a line) at :data:`CUTS` points: after the first N lines, and inside the next
    non-blank line (half of its text)."""
    lines = text.splitlines(keepends=True)
    out: list[tuple[str, str, bool]] = []
    for k in range(1, CUTS + 1):
        n = max(1, round(k * len(lines) / (CUTS + 1)))
        head = "".join(lines[:n])
        if head != text:
            out.append((f"after line {n}", head, False))
        nxt = next((i for i in range(n, len(lines)) if lines[i].strip()), None)
        if nxt is not None:
            line = lines[nxt].rstrip("\n")
            start = len(line) - len(line.lstrip())
            mid = start + max(1, (len(line) - start) // 2)
            out.append((f"inside line {nxt + 1} at column {mid}", "".join(lines[:nxt]) + line[:mid], True))
    return list({cut: (label, cut, inside) for label, cut, inside in out}.values())


# --- documented exceptions: cut outputs that are complete outputs too ---------------------------------------------


@dataclass(frozen=True)
class Indistinguishable:
    """A cut whose last line matches ``last_line`` (after that whole line; inside it too with ``inside_line``) is
    also a complete output of fewer records: ``why`` says why nothing in the format tells them apart. ``witness``
    is a cut of a fixture that shows it: (fixture, lines kept, characters kept of the next line or None)."""

    format: str
    last_line: str
    why: str
    witness: tuple[str, int, int | None]
    inside_line: bool = False


NO_COUNT = "one line per {}, and the tool prints no count and no end marker"
INDISTINGUISHABLE = [
    Indistinguishable(
        "lctl get_param osc.*.import",
        r"^\s+(last_checked: \d+|\w+_per_rpc: \d+|MB_per_sec: \S+)$",
        "an import value ends after transactions (or a *_data_averages line); lctl prints no count of the imports",
        ("health/lustre/imports_master_full_derived.txt", 33, None),
    ),
    Indistinguishable(
        "lctl get_param osc.*.import",
        r"^\s+(idle: \d+ sec|in-progress_invalidations: \d+)$",
        "the value of a device without RPC statistics ends after connection "
        "(lprocfs_import_seq_show_locked() returns there); only a later import shows statistics",
        ("health/lustre/imports_master_full_derived.txt", 21, None),
    ),
    Indistinguishable(
        "lctl get_param osc.*.import",
        r"^error: get_param: .*: No such file or directory$",
        "lctl prints one error line per pattern that matched no device; the reader is not told which "
        "patterns were asked",
        ("health/lustre/imports_not_mounted_derived.txt", 1, None),
    ),
    Indistinguishable(
        "lctl get_param *_server_uuid",
        r"\S+_UUID\t[A-Z_]+(\tDEACTIVATED)?$",
        NO_COUNT.format("device"),
        ("health/lustre/ost_server_uuid_derived.txt", 1, None),
    ),
    Indistinguishable(
        "lctl get_param health_check",
        r"^(health_check=)?(healthy|NOT HEALTHY|LBUG|device \S+ reported unhealthy|)$",
        "each line is a whole fact and none is a count; the sysfs verdict comes first, and in the "
        "procfs layout every line before the verdict is itself a fault, so a cut never hides one",
        ("health/lustre/health_check_unhealthy_2.14_ddn.txt", 1, None),
    ),
    Indistinguishable(
        "lctl ping",
        r"^(\d+-)?\S+@\S+$",
        NO_COUNT.format("NID of the peer") + " (only 'N out of M ids listed' for a long list)",
        ("tools/lctl/ping_two_nids.txt", 2, None),
    ),
    Indistinguishable(
        "lctl list_nids", r"^\S+@\S+$", NO_COUNT.format("NID"), ("tools/lctl/list_nids_tcp_tcp2.txt", 1, None)
    ),
    Indistinguishable(
        "lnetctl net show",
        r"^\s+(CPT: .+|0: \S+|status: (up|down))$",
        "lnetctl prints no count of NIs: an NI ends with its CPT (-v), its interface, or its status "
        "(lo, or an NI without an interface)",
        ("tools/lnetctl/2.15/net_show_o2ib_mr.txt", 11, None),
    ),
    Indistinguishable(
        "lnetctl net show",
        r"^\s+0: \S+$",
        "the interface name is cut inside, after the NI's facts: it only names the NI",
        ("tools/lnetctl/2.16/net_show_o2ib_mr_tcp.txt", 10, 22),
        inside_line=True,
    ),
    Indistinguishable(
        "lfs check servers",
        r"^(\S+ (active|inactive)\.|lfs check: error: check '.+': .+ \(-?\d+\))$",
        NO_COUNT.format("device") + "; the exit status is 0 either way",
        ("tools/lfs/check_servers_2.10_active.txt", 1, None),
    ),
    Indistinguishable(
        "lfs df",
        r"^filesystem[_ ]summary:",
        "a table ends with its summary, one table per mounted file system and no count of them "
        "(lustre_targets.df_findings compares the tables with /proc/mounts: LUSTRE_DF_MISSING)",
        ("tools/lfs/df_i_three_fs.txt", 9, None),
    ),
    Indistinguishable(
        "/proc/mounts", r" 0 0$", NO_COUNT.format("mount"), ("tools/proc_mounts/go-lustre_mtab.txt", 16, None)
    ),
    Indistinguishable(
        "ibstat",
        r"^\s*Link layer: (InfiniBand|Ethernet)$",
        "a CA ends with its last port's link layer, and ibstat prints no count of CAs",
        ("health/ibstat/rdma-core-47/h100-ib-ndr-8hca-active.txt", 17, None),
    ),
    Indistinguishable(
        "ibstatus",
        r"^\s*link_layer:\s+(InfiniBand|Ethernet|IB)$",
        "a block ends with link_layer, and ibstatus prints no count of ports",
        ("health/ibstatus/a100-hdr-8hca-active.txt", 8, None),
    ),
    Indistinguishable(
        "ibv_devinfo",
        r"^\s*link_layer:\s+\S+$",
        "a device ends with its last port's link_layer (without -v), and ibv_devinfo prints no count of devices",
        ("health/ibv_devinfo/cx7-eth-and-ib-2hca.txt", 18, None),
    ),
    Indistinguishable(
        "rdma statistic show",
        r"^(link \S+/\d+( \S+ \d+)*|\s+\w+ \d+)$",
        "the counter set is the driver's and differs by device and port type; nothing marks the end "
        "of a port or of the output, and the last value may be cut inside its digits",
        ("health/rdma-statistic/mlnx-iproute2-4link-after_derived.txt", 0, 36),
        inside_line=True,
    ),
    Indistinguishable(
        "mlxlink",
        r"^Raw Physical BER\s+: \d+(E-?\d*)?$",
        "the last value of the text output, cut inside its digits, is still a number (the JSON "
        "output the role runs cannot be cut and still load)",
        ("health/mlxlink/mft-4.30.1-bluefield3/mlxlink-m-c.txt", 92, 42),
        inside_line=True,
    ),
]


def allowed(fmt: Format, cut: str, inside_line: bool) -> Indistinguishable | None:
    last = next((line for line in reversed(cut.splitlines()) if line.strip()), "")
    return next(
        (
            e
            for e in INDISTINGUISHABLE
            if e.format == fmt.name and re.search(e.last_line, last) and (e.inside_line or not inside_line)
        ),
        None,
    )


def only_lost(items: Items, whole: Items, inside_line: bool) -> bool:
    """Every item read is one of the whole text's (inside a line, the last item read may be that line's, cut)."""
    kept = items[:-1] if inside_line else items
    return all(i in whole for i in kept)


CASES = [(fmt, path) for fmt in FORMATS for path in fmt.files()]


@pytest.mark.parametrize(("fmt", "path"), CASES, ids=[f"{f.name}: {p.parent.name}/{p.name}" for f, p in CASES])
def test_a_cut_output_is_incomplete_or_reads_the_same(fmt: Format, path: Path) -> None:
    text = path.read_text()
    incomplete, whole = fmt.read(text)
    assert incomplete == (path.name in WHOLE_INCOMPLETE), "the whole fixture's completeness changed"
    problems = []
    for label, cut, inside_line in cuts(text):
        incomplete, items = fmt.read(cut)
        if incomplete or items == whole:
            continue
        if allowed(fmt, cut, inside_line) and only_lost(items, whole, inside_line):
            continue
        lost = [i for i in whole if i not in items]
        invented = [i for i in items if i not in whole]
        problems.append(
            f"{label}: {len(items)} of {len(whole)} items and no unknown reason; lost {lost[:2]}, "
            f"invented or changed {invented[:2]}"
        )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("exception", INDISTINGUISHABLE, ids=[f"{e.format}: {e.witness[0]}" for e in INDISTINGUISHABLE])
def test_each_exception_is_a_cut_no_reader_can_see(exception: Indistinguishable) -> None:
    """The witness cut reads fewer (or, inside a line, a cut last) item with no unknown reason, and is allowed only
    by this exception: when a reader learns to see it, the exception goes."""
    fmt = next(f for f in FORMATS if f.name == exception.format)
    name, keep, column = exception.witness
    lines = (FIX / name).read_text().splitlines(keepends=True)
    cut = "".join(lines[:keep]) + (lines[keep][:column] if column is not None else "")
    incomplete, items = fmt.read(cut)
    _, whole = fmt.read((FIX / name).read_text())
    assert not incomplete and items != whole and only_lost(items, whole, column is not None)
    assert allowed(fmt, cut, column is not None) is exception
