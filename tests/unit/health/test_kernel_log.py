"""Kernel-log parser on recorded dmesg/journald outputs (tests/fixtures/health/kernel-log/*/README.md name sources)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from hwaac.health.kernel_grading import grade_kernel_log
from hwaac.health.parsers.kernel_log import KernelLog, parse_kernel_log
from hwaac.health.result import Action, Status
from hwaac.health.xid import xid_action

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "health" / "kernel-log"
SMI = FIX.parent / "nvidia-smi"


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def graded(raw: str, **kw: object) -> KernelLog:
    """Read (the parser's events) and grade (the check layer), as check_kernel_log does."""
    return grade_kernel_log(parse_kernel_log(raw, **kw))  # type: ignore[arg-type]


def found(result) -> list[tuple[str, Status, Action]]:
    return [(f.code, f.status, f.action) for f in result.findings]


def test_healthy_h200_boot_log_passes_and_names_the_driver():
    result = graded(read(SMI / "h200-580.159.04" / "dmesg-nvrm.out"))
    assert result.status() is Status.PASS and result.events == []
    assert result.version == "580.159.04"  # "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.159.04"
    assert (result.lines_read, result.lines_unrecognised) == (3, 0)


def test_healthy_journal_short_iso_passes():
    result = graded(read(FIX / "gpud-journal-short-iso" / "journal.log"))
    assert result.status() is Status.PASS and result.lines_read == 6


def test_dmesg_ctime_xid119_groups_lines_per_gpu():
    result = graded(read(FIX / "gpud-dmesg-T-xid119" / "dmesg.log"))
    assert result.status() is Status.FAIL
    assert found(result) == [("GPU_XID_119", Status.FAIL, Action.RESET_GPU)]
    events = [e for e in result.events if e.kind == "xid"]
    assert len(events) == 5 and {e.pci for e in events} == {"0000:9b:00"}
    first = events[0]
    assert first.time == datetime(2025, 2, 23, 16, 24, 18) and first.time_text == "Sun Feb 23 16:24:18 2025"
    assert (first.pid, first.process) == (2024380, "nvidia-smi")
    assert events[3].process == "cache_mgr_main"
    # "NVRM: GPU at PCI:0000:9b:00: GPU-..." and the board serial line after it
    assert result.gpu_ids["0000:9b:00"] == {
        "uuid": "GPU-00000000-1111-2222-3333-777777777777",
        "serial": "0000000000004",
    }
    finding = result.findings[0]
    assert finding.subject == "gpu 0000:9b:00" and "5 line(s)" in finding.message
    assert finding.evidence.count("\n") == 4 and "more line" not in finding.evidence  # the 5 lines, nothing left out


def test_dmesg_ctime_xid13_unknown_pid_and_109():
    result = graded(read(FIX / "gpud-dmesg-ctime-xid13-109" / "dmesg.log"))
    assert result.status() is Status.WARN
    assert found(result) == [
        ("GPU_XID_13", Status.WARN, Action.RESTART_APP),
        ("GPU_XID_109", Status.WARN, Action.RESET_GPU),  # NONFATAL in NVIDIA's map
    ]
    xid13 = [e for e in result.events if e.code == 13]
    assert len(xid13) == 3 and all(e.pid is None and e.process is None for e in xid13)  # pid='<unknown>'
    assert xid13[0].message.startswith("Graphics SM Warp Exception")


def test_dmesg_xid48_63_94():
    result = graded(read(FIX / "runbook-dmesg-xid48-63-94" / "dmesg.log"))
    assert result.status() is Status.FAIL
    assert found(result) == [
        ("GPU_XID_48", Status.FAIL, Action.RESET_GPU),
        ("GPU_XID_63", Status.WARN, Action.NONE),
        ("GPU_XID_94", Status.WARN, Action.RESTART_APP),
    ]
    assert [e.uptime_s for e in result.events] == [430954.509105, 430954.532443, 430954.533994]
    assert all(e.time is None for e in result.events)


def test_journal_short_needs_a_year_and_reads_154_and_unlisted_171():
    raw = read(FIX / "blog-journal-short-xid48-63-154" / "journal.log")
    result = graded(raw, year=2025)
    assert result.status() is Status.FAIL
    assert found(result) == [
        ("GPU_XID_48", Status.FAIL, Action.RESET_GPU),
        ("GPU_XID_171", Status.UNKNOWN, Action.RETEST),  # newer than NVIDIA's map at e712af97
        ("GPU_XID_63", Status.WARN, Action.NONE),
        ("GPU_XID_154", Status.FAIL, Action.RESET_GPU),  # "... to 0x4 (Drain and Reset)"
    ]
    assert result.events[0].time == datetime(2025, 8, 10, 15, 36, 5)
    assert result.events[2].pid == 2187734 and result.events[2].process == "python"
    assert "0x4 (Drain and Reset)" in result.findings[3].message
    no_year = graded(raw)
    assert no_year.events[0].time is None and no_year.events[0].time_text == "Aug 10 15:36:05"
    assert found(no_year) == found(result)


def test_journal_short_precise_and_short_iso():
    precise = graded(read(FIX / "derived" / "journal-short-precise.log"), year=2025)
    assert precise.events[0].time == datetime(2025, 10, 24, 11, 2, 14, 509105)
    assert [f.code for f in precise.findings] == ["GPU_XID_48", "GPU_XID_63", "GPU_XID_94"]
    iso = graded(read(FIX / "derived" / "journal-short-iso-xid79.log"))
    assert iso.events[0].time == datetime(2025, 1, 17, 17, 39, 30, tzinfo=UTC)
    assert found(iso) == [("GPU_XID_79", Status.FAIL, Action.REBOOT)]  # no second GPU_FALLEN_OFF_BUS


def test_xid79_bare_lines_with_pci_domain():
    result = graded(read(FIX / "ogkm-461-xid79-119" / "dmesg.log"))
    assert found(result) == [
        ("GPU_XID_79", Status.FAIL, Action.REBOOT),
        ("GPU_XID_119", Status.FAIL, Action.RESET_GPU),
    ]
    assert result.events[0].pci == "0004:01:00" and result.events[1].process == "nv_queue"


def test_xid64_row_remap_failure():
    assert found(graded(read(FIX / "derived" / "dmesg-xid64.log"))) == [("GPU_XID_64", Status.FAIL, Action.RESET_GPU)]


def test_xid94_95_nvidia_examples_with_mig():
    result = graded(read(FIX / "nvidia-doc-examples" / "xid-94-95.log"))
    assert [e.gpu_instance for e in result.events] == [5, None, None]
    assert [e.pid for e in result.events] == [7194, 7062, 7062]
    assert found(result) == [
        ("GPU_XID_94", Status.WARN, Action.RESTART_APP),
        ("GPU_XID_95", Status.FAIL, Action.RESET_GPU),
    ]


def test_nvlink5_xids_follow_their_fatal_word():
    result = graded(read(FIX / "gpud-pr1160-nvlink5" / "kmsg.log"))
    assert found(result) == [
        ("GPU_XID_144", Status.WARN, Action.RESET_GPU),  # "SAW_MVB Nonfatal"
        ("GPU_XID_149", Status.FAIL, Action.RESET_GPU),  # "NETIR_LINK_EVT Fatal"
    ]


def test_fallen_off_the_bus_multiline_without_xid():
    result = graded(read(FIX / "nvsentinel-155-fallen-off-bus" / "dmesg.log"))
    assert result.status() is Status.FAIL and result.version == "570.158.01"
    ((code, status, action),) = found(result)
    assert (code, status, action) == ("GPU_FALLEN_OFF_BUS", Status.FAIL, Action.REBOOT)
    (event,) = result.events
    assert (event.pci, event.uptime_s) == ("0000:b3:00.0", 1843.308145)
    assert event.line.count("\n") == 2 and "not responding to commands" in result.findings[0].evidence


def test_fallen_off_the_bus_one_line_twice_is_one_finding():
    result = graded(read(FIX / "bumblebee-554-fallen-off-bus" / "dmesg.log"))
    assert [f.code for f in result.findings] == ["GPU_FALLEN_OFF_BUS"]
    assert "2 message(s)" in result.findings[0].message and result.findings[0].subject == "gpu 0000:01:00.0"


def test_sxid_fatal_with_details():
    result = graded(read(FIX / "redhat-6619941-sxid" / "dmesg.log"))
    assert found(result) == [("NVSWITCH_SXID_20034", Status.FAIL, Action.REBOOT)]
    (event,) = result.events
    assert (event.switch, event.pci, event.code) == ("nvidia-nvswitch0", "0000:a9:00.0", 20034)
    assert [d.split()[0] for d in event.details] == ["Severity", "Data"]


def test_sxid_nonfatal_warns_and_benign_passes():
    nonfatal = graded(read(FIX / "imbue-docstrings" / "sxid-12028.log"))
    assert found(nonfatal) == [("NVSWITCH_SXID_12028", Status.WARN, Action.NONE)]
    benign = graded(read(FIX / "derived" / "dmesg-sxid-benign.log"))
    assert benign.status() is Status.PASS and benign.events[0].code == 12021


def test_mlx5_pcie_limited_narrow_link_fails():
    result = graded(read(FIX / "imbue-docstrings" / "mlx5-pcie-limited.log"))
    assert found(result) == [("NIC_PCIE_LIMITED", Status.FAIL, Action.REBOOT)]
    limit = result.events[0].pcie
    assert limit is not None
    assert (limit.driver, limit.available_gbps, limit.width, limit.capable_width) == ("mlx5_core", 252.056, 8, 16)
    assert (limit.speed_gts, limit.capable_gbps, limit.at) == (32.0, 504.112, "0000:97:01.0")


def test_gpu_pcie_limited_by_switch_generation_warns():
    result = graded(read(FIX / "stas00-pcie-limited" / "dmesg.log"))
    assert found(result) == [("PCIE_BANDWIDTH_LIMITED", Status.WARN, Action.NONE)] * 2
    assert [e.pci for e in result.events] == ["0000:04:00.0", "0000:8b:00.0"]


# -- nothing unreadable passes ------------------------------------------------------------------------------------

FAILING = sorted(p for p in FIX.rglob("*.log") if graded(p.read_text(encoding="utf-8")).status() is Status.FAIL)
# Cut at 2/3, this two-line log ends at "... NVRM:", before any text that names a fault: what is left is a log with
# nothing wrong in it, which no reader can tell from a log that ended there. Its cuts inside the XID line are below.
CUT_BEFORE_ANY_FAULT = {FIX / "gpud-pr870-dmesg-decode-iso" / "dmesg.log"}
OTHER_TOOLS = [
    SMI / "h200-580.159.04" / "q-x.xml",
    SMI / "h200-580.159.04" / "query-gpu.csv",
    SMI / "h200-580.159.04" / "nvidia-smi.txt",
    SMI / "h200-580.159.04" / "topo-m.txt",
    SMI / "h100-550.90.07-8gpu" / "nvlink-s.txt",
]


def test_enough_failing_fixtures():
    assert len(FAILING) >= 12


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("", id="empty"),
        pytest.param("\n  \n", id="blank"),
        pytest.param("\x00\x01garbage ~~~ {]\n%%%\nno kernel here\n", id="garbage"),
        *(pytest.param(read(p), id=f"{p.parent.name}-{p.name}") for p in OTHER_TOOLS),
        *(
            pytest.param(read(p)[: len(read(p)) * 2 // 3], id=f"truncated-{p.parent.name}-{p.name}")
            for p in FAILING
            if p not in CUT_BEFORE_ANY_FAULT
        ),
    ],
)
def test_unreadable_or_failing_input_never_passes(raw):
    assert graded(raw).status() is not Status.PASS


@pytest.mark.parametrize("end", ["NVRM: Xid", "NVRM: Xid (PCI:0000:04:00): "])
def test_a_decoded_xid_line_cut_before_its_number_is_unknown(end: str) -> None:
    raw = read(FIX / "gpud-pr870-dmesg-decode-iso" / "dmesg.log")
    result = graded(raw[: raw.index(end) + len(end)])
    assert result.status() is Status.UNKNOWN and result.findings == []


def test_mostly_foreign_lines_are_unknown():
    raw = read(FIX / "runbook-dmesg-xid48-63-94" / "dmesg.log") + read(SMI / "h200-580.159.04" / "topo-m.txt")
    result = graded(raw)
    assert result.unknown and "not kernel log lines" in result.unknown[0]


def test_events_before_the_window_are_history_and_give_no_finding() -> None:
    raw = (FIX / "derived" / "journal-short-iso-xid79.log").read_text()
    # the XID 79 line is stamped 2025-01-17T17:39:30+0000
    recent = graded(raw, since=datetime(2025, 1, 17, 17, 0, tzinfo=UTC))
    assert "GPU_XID_79" in {f.code for f in recent.findings} and recent.status() == Status.FAIL
    old = graded(raw, since=datetime(2025, 1, 17, 18, 0, tzinfo=UTC))
    assert "GPU_XID_79" not in {f.code for f in old.findings}
    assert any(e.code == 79 for e in old.history) and not any(e.code == 79 for e in old.events)
    # dmesg's seconds since boot: the XID 64 line is at 430954.5 s
    raw = (FIX / "derived" / "dmesg-xid64.log").read_text()
    assert "GPU_XID_64" in {f.code for f in graded(raw, since_uptime_s=430000).findings}
    assert "GPU_XID_64" not in {f.code for f in graded(raw, since_uptime_s=431000).findings}
    # a wall-clock window cannot judge uptime stamps: the event counts
    assert "GPU_XID_64" in {f.code for f in graded(raw, since=datetime(2099, 1, 1, tzinfo=UTC)).findings}


def test_dmesg_decode_lines_are_kernel_log_lines() -> None:
    result = graded(read(FIX / "lore-dmesg-decode" / "dmesg-x.log"))
    assert (result.status(), result.lines_read, result.lines_unrecognised) == (Status.PASS, 10, 0)


@pytest.mark.parametrize(
    "plain, decoded",
    [
        ("runbook-dmesg-xid48-63-94/dmesg.log", "derived/dmesg-decode-xid48-63-94.log"),
    ],
)
def test_dmesg_decode_reads_the_same_events_as_plain_dmesg(plain: str, decoded: str) -> None:
    a, b = graded(read(FIX / plain)), graded(read(FIX / decoded))
    assert found(b) == found(a) and found(b)
    assert [(e.code, e.uptime_s, e.message) for e in b.events] == [(e.code, e.uptime_s, e.message) for e in a.events]
    assert {e.level for e in b.events} == {"warn"} and {e.level for e in a.events} == {""}
    assert {e.facility for e in b.events} == {"kern"} and not any("not by the driver" in f.message for f in b.findings)


def test_dmesg_decode_iso_injected_xid79_is_graded_and_said_to_come_from_a_process() -> None:
    # gpud PR 870: "syslog:err   : 2025-05-27T04:18:56,089671+00:00 NVRM: Xid (PCI:0000:04:00): 79, ..."
    result = graded(read(FIX / "gpud-pr870-dmesg-decode-iso" / "dmesg.log"))
    assert (result.lines_read, result.lines_unrecognised, result.unknown) == (2, 0, [])
    (event,) = result.events  # the "hello" line is read and holds no event
    assert (event.code, event.pci, event.level, event.facility) == (79, "0000:04:00", "err", "syslog")
    assert event.time == datetime(2025, 5, 27, 4, 18, 56, 89671, tzinfo=UTC) and event.uptime_s is None
    assert event.message == "GPU has fallen off the bus" and event.pid is None
    assert found(result) == [("GPU_XID_79", Status.FAIL, Action.REBOOT)]  # graded as the driver's own XID 79
    assert "facility syslog" in result.findings[0].message and "not by the driver" in result.findings[0].message


@pytest.mark.parametrize(
    "prefix, level, facility",
    [
        ("<3>", "err", "kern"),
        ("<4>", "warn", "kern"),
        ("<12>", "warn", "user"),
        ("<43>", "err", "syslog"),
        ("kern  :err   : ", "err", "kern"),
        ("syslog:err   : ", "err", "syslog"),
    ],
)
def test_priority_and_decode_prefixes_give_the_level(prefix: str, level: str, facility: str) -> None:
    line = read(FIX / "runbook-dmesg-xid48-63-94" / "dmesg.log").splitlines()[0]  # the XID 48 line
    result = graded(prefix + line)
    assert [(e.code, e.level, e.facility) for e in result.events] == [(48, level, facility)] and not result.unknown


def test_secondary_xid45_is_graded_by_its_cause() -> None:
    result = graded(read(FIX / "ogkm-1150-secondary-xid45" / "journal.log"))
    assert {e.caused_by for e in result.events} == {145, 149}
    fatal = xid_action(149)  # both causes are FATAL NVLink 5 XIDs in NVIDIA's map; a plain XID 45 is not
    assert (xid_action(45).status, xid_action(145).status) == (Status.WARN, fatal.status)
    assert {(f.code, f.subject, f.status, f.action) for f in result.findings} == {
        ("GPU_XID_45", f"gpu 0000:{bus}:00", fatal.status, fatal.action) for bus in ("dc", "ed", "ba", "97")
    }
    assert all("secondary to Xid 14" in f.message for f in result.findings)


def test_secondary_xid_follows_its_cause_lines_when_present() -> None:
    # XID 149 line and XID 45 line of the same GPU: gpud PR 1160's Fatal 149 line with the 1150 issue's XID 45 line
    # moved onto its PCI address (the 149 line is graded from its own text)
    cause = read(FIX / "gpud-pr1160-nvlink5" / "kmsg.log").splitlines()[1]
    second = read(FIX / "ogkm-1150-secondary-xid45" / "journal.log").splitlines()[0].replace("0000:dc:00", "0000:00:00")
    result = graded(cause + "\n" + second)
    grades = {f.code: (f.status, f.action) for f in result.findings}
    assert grades["GPU_XID_45"] == grades["GPU_XID_149"]


def test_the_reader_returns_events_and_the_check_layer_grades() -> None:
    facts = parse_kernel_log(read(FIX / "runbook-dmesg-xid48-63-94" / "dmesg.log"))
    assert facts.findings == [] and facts.status() is Status.UNKNOWN  # ungraded: never PASS
    assert [e.code for e in facts.events] == [48, 63, 94]
    result = grade_kernel_log(facts)
    assert result.status() is Status.FAIL and grade_kernel_log(facts).findings == result.findings  # once
    healthy = parse_kernel_log(read(SMI / "h200-580.159.04" / "dmesg-nvrm.out"))
    assert healthy.status() is Status.UNKNOWN and grade_kernel_log(healthy).status() is Status.PASS


def test_xid154_names_its_recovery_action_as_a_fact() -> None:
    raw = read(FIX / "blog-journal-short-xid48-63-154" / "journal.log")
    (event,) = [e for e in parse_kernel_log(raw).events if e.code == 154]
    assert event.recovery_action == "0x4 (Drain and Reset)"
