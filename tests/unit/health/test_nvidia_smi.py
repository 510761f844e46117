"""nvidia-smi parsers on recorded outputs (tests/fixtures/health/nvidia-smi/*/README.md name each source)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.health.gpu_grading import grade_query, grade_query_csv, grade_remapped
from hwaac.health.parsers.nvidia_smi import (
    NvidiaSmiCsv,
    NvidiaSmiQuery,
    RemappedRows,
    canonical_field,
    parse_nvlink_errors,
    parse_nvlink_status,
    parse_query_gpu_csv,
    parse_query_xml,
    parse_remapped_rows_csv,
)
from hwaac.health.parsers.nvidia_smi_model import to_int
from hwaac.health.result import Action, Status


def graded_remapped(raw: str) -> RemappedRows:
    """Read and grade ``--query-remapped-rows``, as check_remapped_rows does."""
    return grade_remapped(parse_remapped_rows_csv(raw))


def graded_csv(raw: str, *, fields: list[str] | None = None) -> NvidiaSmiCsv:
    """Read and grade ``--query-gpu`` CSV, as check_query_gpu_csv does."""
    return grade_query_csv(parse_query_gpu_csv(raw, fields=fields))


def graded_xml(raw: str) -> NvidiaSmiQuery:
    """Read (the parser's facts) and grade (the check layer), as check_gpus does."""
    return grade_query(parse_query_xml(raw))


FIX = Path(__file__).resolve().parents[2] / "fixtures" / "health" / "nvidia-smi"
H200 = FIX / "h200-580.159.04"
H200D = FIX / "h200-580.159.04-derived"
# the field list of the recorded noheader,nounits command (h200-580.159.04/README.md)
NOHEADER_FIELDS = [
    "index",
    "name",
    "ecc.errors.corrected.volatile.total",
    "remapped_rows.pending",
    "clocks_event_reasons.active",
    "pcie.link.gen.current",
    "pcie.link.width.current",
]


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def codes(result) -> list[str]:
    return [f.code for f in result.findings]


# -- -q -x --------------------------------------------------------------------------------------------------------


def test_h200_xml_healthy_newer_layout():
    result = graded_xml(read(H200 / "q-x.xml"))
    assert result.status() is Status.PASS, result.all_findings()
    assert (result.driver_version, result.cuda_version, result.version) == ("580.159.04", "13.0", "580.159.04")
    (gpu,) = result.gpus
    assert (gpu.index, gpu.pci_bus_id, gpu.product_name) == (0, "00000000:00:06.0", "NVIDIA H200")
    assert gpu.uuid == "GPU-00000000-1111-2222-3333-444444444444" and gpu.serial == "0000000000001"
    assert gpu.ecc_mode_current == "Enabled"
    # <sram_uncorrectable_parity> + <sram_uncorrectable_secded>, all 0
    assert gpu.ecc_volatile.layout == gpu.ecc_aggregate.layout == "sram_dram_split"
    assert gpu.ecc_volatile.sram_uncorrectable == 0 and gpu.ecc_volatile.dram_uncorrectable == 0
    assert gpu.sram_threshold_exceeded is False and gpu.unrepairable_memory is False
    assert gpu.remap_supported and gpu.remap_pending is False and gpu.remap_failure is False
    assert gpu.remap_histogram_banks["max"] == 3072  # <row_remapper_histogram_max>3072 bank(s)
    assert gpu.retired_pages_pending is None  # N/A: H200 remaps rows instead
    assert gpu.clock_reasons_tag == "clocks_event_reasons" and gpu.clock_reasons["gpu_idle"] is True
    assert gpu.clock_reasons["hw_slowdown"] is False
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_width_current, gpu.pcie_width_max) == (5, 5, 16, 16)
    assert gpu.pcie_gen_host_max is None  # <max_host_link_gen>N/A
    assert gpu.recovery_action == "None"


@pytest.mark.parametrize(
    "name, status, unknown_about",
    [
        ("q-x-mig-passthrough.xml", Status.PASS, None),  # MIG: volatile ECC N/A by design
        ("q-x-mig-ecc-mode-na.xml", Status.UNKNOWN, "ecc_mode/current_ecc"),  # MIG does not excuse an N/A ECC mode
    ],
)
def test_mig_excuses_only_the_na_it_causes(name: str, status: Status, unknown_about: str | None) -> None:
    q = graded_xml((H200D / name).read_text())
    assert q.status() == status
    assert [u for u in q.unknown if unknown_about is None or unknown_about not in u] == []
    gpu = q.gpus[0]
    assert gpu.mig_mode_current == "Enabled" and gpu.ecc_volatile.dram_uncorrectable is None
    assert gpu.ecc_aggregate.dram_uncorrectable == 0  # still read and judged
    assert bool(gpu.notes) == (status == Status.PASS)


def test_volatile_ecc_na_without_mig_stays_unknown() -> None:
    # the MIG document with MIG switched back off: nothing explains the N/A any more
    raw = (H200D / "q-x-mig-passthrough.xml").read_text().replace("<current_mig>Enabled", "<current_mig>Disabled")
    q = graded_xml(raw)
    assert q.status() == Status.UNKNOWN and any("volatile/dram_uncorrectable" in u for u in q.unknown)


def test_a100_510_whole_mig_passthrough_document_passes():
    # netdata's recorded A100-SXM4-40GB (510.47.03, pass-through VM): MIG on, whole-GPU volatile ECC and remapped rows
    # N/A by design, every count that is read is 0, no clock reason active
    result = graded_xml(read(FIX / "a100-510.47.03-mig-passthrough" / "q-x.xml"))
    assert result.status() is Status.PASS and result.unknown == [] and result.findings == []
    (gpu,) = result.gpus
    assert (result.driver_version, result.cuda_version) == ("510.47.03", "11.6")
    assert gpu.product_name == "NVIDIA A100-SXM4-40GB"
    assert gpu.mig_mode_current == "Enabled" and gpu.ecc_mode_current == "Enabled"
    devices = [
        (d.index, d.gpu_instance_id, d.compute_instance_id, d.sram_uncorrectable_volatile) for d in gpu.mig_devices
    ]
    assert devices == [(0, 1, 0, 0), (1, 2, 0, 0)]
    assert gpu.ecc_volatile.sram_uncorrectable is None and gpu.ecc_volatile.dram_uncorrectable is None
    assert (gpu.ecc_aggregate.sram_uncorrectable, gpu.ecc_aggregate.dram_uncorrectable) == (0, 0)
    assert gpu.remap_supported is False and gpu.retired_pages_pending is None and len(gpu.notes) == 2
    # the one element with a line break inside ("Not Active\n            </...>") reads like the others
    assert gpu.clock_reasons_tag == "clocks_throttle_reasons"
    assert gpu.clock_reasons["applications_clocks_setting"] is False and not any(gpu.clock_reasons.values())
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_width_current, gpu.pcie_width_max) == (4, 4, 16, 16)
    assert (gpu.recovery_action, gpu.reset_required) == (None, None)  # neither element before driver 535


MIG_DOC = FIX / "a100-510.47.03-mig-passthrough" / "q-x.xml"
MIG_DEVICE_1_SRAM = (  # the second MIG device's volatile SRAM count (GI 2), as the recorded document writes it
    "<gpu_instance_id>2</gpu_instance_id>\n                <compute_instance_id>0</compute_instance_id>"
)


@pytest.mark.parametrize(
    ("count", "status", "codes_found"),
    [
        (
            "3",
            Status.FAIL,
            ["GPU_ECC_SRAM_UNCORRECTABLE_VOLATILE"],
        ),  # a MIG device's own count is the GPU's volatile count
        ("N/A", Status.PASS, []),
        ("Unknown Error", Status.UNKNOWN, []),
    ],
)
def test_mig_device_volatile_sram_count_is_judged(count: str, status: Status, codes_found: list[str]) -> None:
    raw = read(MIG_DOC)
    at = raw.index(MIG_DEVICE_1_SRAM)
    head, tail = raw[:at], raw[at:]
    tail = tail.replace("<sram_uncorrectable>0<", f"<sram_uncorrectable>{count}<", 1)
    result = graded_xml(head + tail)
    assert result.status() is status and codes(result) == codes_found
    if codes_found:
        (finding,) = result.findings
        assert finding.action is Action.RESET_GPU and "MIG device(s) 1 (GI 2, CI 0)" in finding.message
        assert "mig_device 1 volatile/sram_uncorrectable=3" in finding.evidence


def test_a100_535_older_ecc_layout_and_reset_status():
    result = graded_xml(read(FIX / "a100-535.54.03" / "q-x.xml"))
    (gpu,) = result.gpus
    assert result.driver_version == "535.54.03" and gpu.product_name == "NVIDIA A100-SXM4-80GB"
    assert gpu.ecc_volatile.layout == "sram_dram" and gpu.ecc_volatile.sram_uncorrectable == 0
    assert gpu.remap_supported is False  # <remapped_rows>N/A</remapped_rows> with MIG on
    assert (gpu.reset_required, gpu.drain_and_reset_recommended, gpu.recovery_action) == (False, False, None)
    assert gpu.mig_mode_current == "Enabled" and gpu.pcie_gen_host_max == 4
    # MIG prints N/A for the remapped-rows block and retired pages: a note, not an unknown reason; only that Checkmk
    # kept one of the 4 GPUs leaves the document incomplete
    assert result.status() is Status.UNKNOWN and not result.findings
    assert result.unknown == ["attached_gpus is 4 but the log has 1 <gpu>"]
    assert gpu.notes and "remapped-rows" in gpu.notes[0]


def test_remapped_rows_na_without_mig_stays_unknown():
    raw = read(FIX / "a100-535.54.03" / "q-x.xml").replace("<current_mig>Enabled", "<current_mig>Disabled")
    assert any("pending_retirement" in reason for reason in graded_xml(raw).unknown)


def test_v100_410_pre_ampere_layout_fails_on_dbe_and_pending_retirement():
    result = graded_xml(read(FIX / "v100-410.104" / "q-x.xml"))
    (gpu,) = result.gpus
    assert gpu.clock_reasons_tag == "clocks_throttle_reasons" and gpu.clock_reasons["gpu_idle"] is True
    vol, agg = gpu.ecc_volatile, gpu.ecc_aggregate
    assert vol.layout == "single_double_bit"
    assert (vol.corrected_total, vol.uncorrected_total, vol.dram_uncorrectable) == (1, 1, 1)
    assert (agg.corrected_total, agg.uncorrected_total) == (291, 7627)
    assert (gpu.retired_pages_sbe, gpu.retired_pages_dbe, gpu.retired_pages_pending) == (0, 2, True)
    assert (gpu.pcie_gen_current, gpu.pcie_width_current) == (3, 16)
    assert result.status() is Status.FAIL
    assert codes(result) == ["GPU_ECC_UNCORRECTABLE_VOLATILE", "GPU_RETIRED_PAGES_PENDING"]
    assert [f.action for f in result.findings] == [Action.RESET_GPU, Action.REBOOT]
    assert result.findings[0].subject == "gpu0 00000000:34:00.0"


def test_remap_pending_fails_with_reset():
    result = graded_xml(read(H200D / "q-x-remap-pending.xml"))
    assert result.status() is Status.FAIL
    (finding,) = result.findings
    assert (finding.code, finding.action) == ("GPU_ROW_REMAP_PENDING", Action.RESET_GPU)
    assert "remapped_row_pending=Yes" in finding.evidence and "remapped_row_unc=1" in finding.evidence


def test_recovery_action_and_volatile_dram_ue_fail():
    result = graded_xml(read(H200D / "q-x-recovery-drain-and-reset.xml"))
    assert result.status() is Status.FAIL
    by_code = {f.code: f for f in result.findings}
    assert by_code["GPU_ECC_DRAM_UNCORRECTABLE_VOLATILE"].action is Action.RESET_GPU
    assert by_code["GPU_RECOVERY_ACTION"].action is Action.RESET_GPU
    assert "Drain and Reset" in by_code["GPU_RECOVERY_ACTION"].evidence


def test_remap_failure_and_unknown_error_from_an_edited_recording():
    # Two more one-word edits of the recorded H200 XML, made here rather than as files.
    xml = read(H200 / "q-x.xml")
    failed = graded_xml(xml.replace("<remapped_row_failure>No<", "<remapped_row_failure>Yes<"))
    assert [(f.code, f.action) for f in failed.findings] == [("GPU_ROW_REMAP_FAILURE", Action.RMA)]
    unread = graded_xml(xml.replace("<remapped_row_pending>No<", "<remapped_row_pending>Unknown Error<"))
    assert unread.status() is Status.UNKNOWN
    assert any("remapped_row_pending" in reason for reason in unread.unknown)


# -- --query-gpu CSV ----------------------------------------------------------------------------------------------


def test_h200_csv_with_header_and_units():
    result = graded_csv(read(H200 / "query-gpu.csv"))
    assert result.status() is Status.PASS, result.all_findings()
    assert result.version == "580.159.04"  # from the driver_version column
    (row,) = result.rows
    assert row["serial"] == "0000000000001" and row["pci.bus_id"] == "00000000:00:06.0"
    assert row["power.draw"] == 132.96 and result.units["power.draw"] == "W"  # "132.96 W", header [W]
    assert row["memory.total"] == 143771 and result.units["memory.total"] == "MiB"
    assert row["clocks.current.sm"] == 1980  # requested as clocks.sm, answered under clocks.current.sm
    assert row["pcie.link.gen.gpucurrent"] == 5  # pcie.link.gen.current is deprecated
    # clocks_throttle_reasons.active was answered under the new header: both columns are one canonical field
    assert result.fields.count("clocks_event_reasons.active") == 2 and row["clocks_event_reasons.active"] == 1
    assert row["remapped_rows.pending"] is False and row["retired_pages.pending"] is None


def test_noheader_csv_needs_fields_and_maps_legacy_names():
    raw = read(H200 / "query-gpu-noheader-nounits.csv")
    result = graded_csv(raw, fields=NOHEADER_FIELDS)
    assert result.status() is Status.PASS
    assert result.rows == [
        {
            "index": 0,
            "name": "NVIDIA H200",
            "ecc.errors.corrected.volatile.total": 0,
            "remapped_rows.pending": False,
            "clocks_event_reasons.active": 1,
            "pcie.link.gen.gpucurrent": 5,
            "pcie.link.width.current": 16,
        }
    ]
    assert graded_csv(raw).status() is Status.UNKNOWN
    assert graded_csv(raw, fields=NOHEADER_FIELDS[:3]).status() is Status.UNKNOWN  # wrong width


def test_csv_full_of_na_is_unknown():
    result = graded_csv(read(H200D / "query-gpu-all-na.csv"))
    assert result.status() is Status.UNKNOWN
    assert any("25 of 28 values are placeholders" in reason for reason in result.unknown)
    assert any("remapped_rows.pending is N/A" in reason for reason in result.unknown)
    assert result.rows[0]["ecc.errors.uncorrected.volatile.total"] is None  # never 0


def test_csv_unknown_error_is_unknown():
    result = graded_csv(read(H200D / "query-gpu-unknown-error.csv"))
    assert result.status() is Status.UNKNOWN
    assert any("ecc.errors.uncorrected.volatile.total is 'unknown error'" in r for r in result.unknown)


def test_geforce_rows_of_placeholders_and_informational_na():
    # the commands of the two threads (geforce-issue-threads/README.md)
    megaminer_fields = [
        "gpu_name",
        "utilization.gpu",
        "utilization.memory",
        "temperature.gpu",
        "power.draw",
        "power.limit",
        "fan.speed",
        "pstate",
        "clocks.current.graphics",
        "clocks.current.memory",
        "power.max_limit",
        "power.default_limit",
    ]
    raw = read(FIX / "geforce-issue-threads" / "megaminer-235-not-supported.csv")
    megaminer = graded_csv(raw, fields=megaminer_fields)
    assert megaminer.status() is Status.UNKNOWN  # 8 of 12 values [Not Supported]
    assert megaminer.rows[0]["name"] == "GeForce GTX 770" and megaminer.rows[0]["fan.speed"] == 52  # "52 %"
    fields = ["memory.total", "memory.free", "memory.used", "temperature.gpu", "fan.speed", "utilization.gpu"]
    fields.append("utilization.memory")
    for name in ("i3pystatus-776-new.csv", "i3pystatus-776-old.csv"):  # [N/A] and [Not Supported] in fan.speed
        result = graded_csv(read(FIX / "geforce-issue-threads" / name), fields=fields)
        assert result.status() is Status.PASS and result.rows[0]["fan.speed"] is None
        assert result.rows[0]["memory.total"] == 2004


def test_csv_findings_from_values():
    # The recorded noheader row with edited values, to reach the CSV findings.
    fields = [*NOHEADER_FIELDS, "remapped_rows.failure", "ecc.errors.uncorrected.volatile.total"]
    raw = "0, NVIDIA H200, 0, Yes, 0x0000000000000048, 5, 16, Yes, 2\n"
    facts = parse_query_gpu_csv(raw, fields=fields)
    assert facts.findings == [] and facts.status() is Status.UNKNOWN  # ungraded: never PASS
    assert facts.rows[0]["remapped_rows.pending"] is True and facts.subjects == ["gpu0"]
    result = grade_query_csv(facts)
    assert grade_query_csv(facts).findings == result.findings  # grading twice adds nothing
    assert result.status() is Status.FAIL
    assert codes(result) == [
        "GPU_ROW_REMAP_PENDING",
        "GPU_ROW_REMAP_FAILURE",
        "GPU_ECC_UNCORRECTABLE_VOLATILE",
        "GPU_CLOCKS_HW_SLOWDOWN",  # 0x8 in the bitmask
        "GPU_CLOCKS_HW_THERMAL_SLOWDOWN",  # 0x40
    ]


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("clocks_throttle_reasons.hw_slowdown", "clocks_event_reasons.hw_slowdown"),
        ("clocks_event_reasons.active", "clocks_event_reasons.active"),
        ("pcie.link.gen.current", "pcie.link.gen.gpucurrent"),
        ("gpu_name", "name"),
        ("gpu_bus_id", "pci.bus_id"),
        ("clocks.sm", "clocks.current.sm"),
        ("retired_pages.sbe", "retired_pages.single_bit_ecc.count"),
        ("ecc.errors.uncorrected.volatile.device_memory", "ecc.errors.uncorrected.volatile.dram"),
        ("remapped_rows.dbe", "remapped_rows.uncorrectable"),
    ],
)
def test_canonical_field(name, canonical):
    assert canonical_field(name) == canonical


def test_nvidia_smi_error_lines_are_unknown():
    result = graded_csv("No devices were found\n", fields=["name"])
    assert result.status() is Status.UNKNOWN and "No devices were found" in result.unknown[0]


def test_gpu_is_lost_fails():
    # nvidia-smi's wording for a lost GPU, written here (not recorded): "Unable to determine the device handle for
    # GPU <bus id>: GPU is lost.  Reboot the system to recover this GPU".
    raw = "Unable to determine the device handle for GPU 00000000:00:06.0: GPU is lost.  Reboot the system to recover\n"
    result = graded_csv(raw, fields=["name"])
    assert result.status() is Status.FAIL
    assert [(f.code, f.action) for f in result.findings] == [("GPU_LOST", Action.REBOOT)]


# -- --query-remapped-rows ----------------------------------------------------------------------------------------


def test_remapped_rows_healthy():
    result = graded_remapped(read(H200 / "query-remapped-rows.csv"))
    assert result.status() is Status.PASS
    (row,) = result.rows
    assert (row.bus_id, row.correctable, row.uncorrectable, row.pending, row.failure) == (
        "00000000:00:06.0",
        0,
        0,
        False,
        False,
    )


@pytest.mark.parametrize("name", ["query-remapped-rows-pending.csv", "query-remapped-rows-pending-01.csv"])
def test_remapped_rows_pending_yes_no_and_0_1(name):
    result = graded_remapped(read(H200D / name))
    assert result.status() is Status.FAIL
    assert (result.rows[0].pending, result.rows[0].uncorrectable) == (True, 1)
    assert [(f.code, f.action) for f in result.findings] == [("GPU_ROW_REMAP_PENDING", Action.RESET_GPU)]


def test_remapped_rows_header_only_is_unknown():
    header = read(H200 / "query-remapped-rows.csv").splitlines()[0]
    assert graded_remapped(header + "\n").status() is Status.UNKNOWN


# -- nothing unreadable passes ------------------------------------------------------------------------------------

PARSERS = {
    "xml": (graded_xml, H200 / "q-x.xml"),  # graded: an ungraded query is UNKNOWN whatever it holds
    "csv": (graded_csv, H200 / "query-gpu.csv"),
    "remapped": (graded_remapped, H200 / "query-remapped-rows.csv"),
    "nvlink-s": (parse_nvlink_status, FIX / "h100-550.90.07-8gpu" / "nvlink-s.txt"),
    "nvlink-e": (parse_nvlink_errors, FIX / "h100-550.90.07-8gpu-derived" / "nvlink-e.txt"),
}
OTHER_TOOLS = [
    H200 / "nvidia-smi.txt",
    H200 / "topo-m.txt",
    H200 / "dmesg-nvrm.out",
    H200 / "q.txt",
    FIX.parent / "kernel-log" / "runbook-dmesg-xid48-63-94" / "dmesg.log",
]


def _inputs():
    for name, (parser, fixture) in PARSERS.items():
        text = read(fixture)
        yield pytest.param(parser, "", id=f"{name}-empty")
        yield pytest.param(parser, "\x00\x01garbage ~~~ {]\n%%%\n", id=f"{name}-garbage")
        yield pytest.param(parser, text[: len(text) // 2 + 7], id=f"{name}-truncated")
        others = [*OTHER_TOOLS, *(f for n, (_, f) in PARSERS.items() if n != name)]
        if name == "csv":  # a --query-remapped-rows answer is also a valid --query-gpu answer for those fields
            others.remove(PARSERS["remapped"][1])
        for other in others:
            yield pytest.param(parser, read(other), id=f"{name}-given-{other.parent.name}-{other.name}")


@pytest.mark.parametrize(("parser", "raw"), list(_inputs()))
def test_unreadable_input_never_passes(parser, raw):
    result = parser(raw)
    assert result.status() is not Status.PASS
    assert result.incomplete or result.findings  # said by the reader or the grading, not by "ungraded" alone


@pytest.mark.parametrize(
    "path",
    sorted(p for p in FIX.rglob("*") if p.suffix in {".xml", ".csv", ".txt"} and "help" not in p.name),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_every_fixture_parses_without_raising(path):
    text = read(path)
    for parser, _ in PARSERS.values():
        parser(text)


def test_the_xml_reader_returns_facts_and_the_check_layer_grades() -> None:
    facts = parse_query_xml(read(H200D / "q-x-remap-pending.xml"))
    assert facts.findings == [] and facts.status() == Status.UNKNOWN  # ungraded: never PASS
    assert facts.gpus[0].remap_pending is True
    graded = grade_query(facts)
    assert [f.code for f in graded.findings] == ["GPU_ROW_REMAP_PENDING"] and graded.status() == Status.FAIL
    assert grade_query(facts).findings == graded.findings  # grading twice adds nothing


def _cut_inside_supported_clocks(text: str) -> str:
    return text[: text.index("</supported_clocks>")]


def _second_gpu_edited(text: str) -> str:
    """The H200 document with a second <gpu> after the first, whose remapped-rows pending reads Yes."""
    head, rest = text.split("<gpu ", 1)
    gpu = "<gpu " + rest[: rest.rindex("</gpu>")] + "</gpu>\n"
    second = gpu.replace("00000000:", "00000001:").replace("<remapped_row_pending>No<", "<remapped_row_pending>Yes<", 1)
    return (
        head.replace("<attached_gpus>1</attached_gpus>", "<attached_gpus>2</attached_gpus>")
        + gpu
        + second
        + ("</nvidia_smi_log>\n")
    )


def test_supported_clocks_are_skipped_but_a_document_cut_inside_them_is_refused() -> None:
    """supported_clocks is cut before the parse (nothing reads it): the facts around it are still read on every GPU,
    and a document truncated inside the block is still not well-formed."""
    text = read(H200 / "q-x.xml")
    assert "<remapped_row_pending>No<" in text and "<attached_gpus>1</attached_gpus>" in text
    two = parse_query_xml(_second_gpu_edited(text))
    read_back = [(g.pci_bus_id, g.remap_pending) for g in two.gpus]
    assert read_back == [("00000000:00:06.0", False), ("00000001:00:06.0", True)]
    assert not two.unknown
    cut = parse_query_xml(_cut_inside_supported_clocks(text))
    assert not cut.gpus and any("not well-formed" in u for u in cut.unknown)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("5", 5),
        ("05", 5),
        ("05 MHz", 5),
        ("16x", 16),
        ("0x0000000000000001", 1),
        ("3072 bank(s)", 3072),
        ("-3", -3),
        (" 7 ", 7),
        ("N/A", None),
        ("[N/A]", None),
        ("Unknown Error", None),
        ("\u00b2", None),
        (None, None),
    ],
)
def test_to_int(text: str | None, value: int | None) -> None:
    assert to_int(text) == value
