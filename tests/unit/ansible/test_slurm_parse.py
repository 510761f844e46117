"""The scontrol node parser and the ownership rules (plugins/module_utils/slurm.py) on every recorded sample in
tests/fixtures/slurm/ (sources in its README).

Expected values were read off the fixture files by hand, not taken from the parser's output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils import slurm
from ansible_collections.aiinfra.hwaac.plugins.module_utils.slurm import (
    SlurmError,
    SlurmState,
    find_node,
    hwaac_reason,
    not_found_in,
    owns_reason,
    parse_show_node,
    predict_drained,
    predict_resumed,
)
from hwaac.health import lifecycle

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "slurm"


def one(name: str) -> slurm.SlurmNode:
    nodes = parse_show_node((FIX / name).read_text())
    assert len(nodes) == 1
    return nodes[0]


def test_prefix_and_ownership_agree_with_the_controller_side_rules() -> None:
    assert slurm.SLURM_REASON_PREFIX == lifecycle.SLURM_REASON_PREFIX == "hwaac:"
    samples = [
        lifecycle.slurm_reason(["GPU_XID_79"], "gpu 3 fell off the bus"),
        lifecycle.slurm_reason([]),
        "hwaac:x",
        "  hwaac: padded",
        "NHC: check_hw_ib failed",
        "Reboot ASAP",
        "Hwaac: other case",
        "",
        None,
    ]
    for reason in samples:
        assert owns_reason(reason) is lifecycle.owns_reason(reason), reason
    # what the module stores for a reason built on the controller is that reason, unchanged
    built = lifecycle.slurm_reason(["GPU_ROW_REMAP_PENDING"], "gpu 5")
    assert hwaac_reason(built) == built


def test_one_liner_23_11_idle_in_service() -> None:
    node = one("show_node_o_idle_23.11.3.txt")
    assert node.name == "node001"
    assert node.state.raw == "IDLE"
    assert (node.state.base, node.state.flags) == ("IDLE", [])
    assert not node.state.offline
    assert node.reason == node.reason_user == node.reason_time == ""
    assert node.owner == "none"
    # values with spaces, the double space after fields that end in one, an empty value
    assert node.fields["OS"] == "Linux 5.14.0-611.20.1.el9_7.x86_64 #1 SMP PREEMPT_DYNAMIC Thu Jan 15 13:21:39 UTC 2026"
    assert node.fields["CoresPerSocket"] == "10"
    assert node.fields["CfgTRES"] == "cpu=20,mem=62715M,billing=20"
    assert node.fields["AllocTRES"] == ""
    assert node.fields["ExtSensorsTemp"] == "n/a"
    assert "Reason" not in node.fields


def test_multi_line_20_11_idle_drain_by_root_with_comment_after_reason() -> None:
    node = one("show_node_idle_drain_20.11.0.txt")
    assert node.name == "node002"
    assert (node.state.base, node.state.flags) == ("IDLE", ["DRAIN"])
    assert node.state.drain and node.state.offline and not node.state.down
    assert node.reason == "Low RealMemory"
    assert (node.reason_user, node.reason_time) == ("root", "2022-05-18T17:20:20")
    assert node.fields["Reason"] == "Low RealMemory [root@2022-05-18T17:20:20]"
    assert node.fields["Comment"] == "(null)"
    assert node.owner == "other"


def test_multi_line_20_02_mixed_drain_and_its_one_liner_form_parse_the_same() -> None:
    multi = one("show_node_mixed_drain_20.02.0.txt")
    single = one("show_node_o_mixed_drain_20.02.0_derived.txt")
    assert multi.fields == single.fields
    assert multi.state.raw == "MIXED+DRAIN"
    assert multi.reason == "deep power-off required for PSU"
    assert (multi.reason_user, multi.reason_time) == ("root", "2020-07-17T13:21:02")
    assert multi.fields["Partitions"] == "gpu"  # printed with a trailing space
    assert multi.fields["AllocTRES"] == "cpu=2,mem=1G"
    assert multi.owner == "other"


def test_multi_line_21_08_down_drain_set_by_slurm() -> None:
    node = one("show_node_down_drain_21.08.3.txt")
    assert (node.state.base, node.state.flags) == ("DOWN", ["DRAIN"])
    assert node.state.down and node.state.drain
    assert node.reason == "Not responding"
    assert node.reason_user == "slurm"
    assert node.owner == "other"
    assert not node.state.reboot_pending


def test_22_05_reboot_issued_with_next_state_and_comment() -> None:
    for name in ("show_node_reboot_issued_22.05.7.txt", "show_node_o_reboot_issued_22.05.7_derived.txt"):
        node = one(name)
        assert node.name == "node005"
        assert (node.state.base, node.state.flags) == ("DOWN", ["CLOUD", "REBOOT_ISSUED"])
        assert node.state.reboot_pending
        assert node.fields["NextState"] == "RESUME"
        # the reason holds " : " and ends at its marker, before Comment=
        assert node.reason == "Reboot ASAP : reboot issued"
        assert (node.reason_user, node.reason_time) == ("slurm", "2023-01-26T10:11:39")
        assert node.fields["Comment"] == "some comment"
        assert node.owner == "other"


def test_25_11_forum_capture_without_indentation() -> None:
    node = one("show_node_idle_drain_25.11.3_forum.txt")
    assert node.name == "node006"
    assert node.state.raw == "IDLE+DRAIN"
    assert node.reason == "health_ps___blocked"
    assert node.fields["CPUSpecList"] == "71,95"
    assert node.fields["Gres"] == "gpu:nvidia_geforce_rtx_5090:4(S:0-3),VramPerGpu:no_consume:32G"
    assert node.fields["CurrentWatts"] == "n/a"
    assert node.owner == "other"


def test_reboot_requested_by_scontrol_reboot_asap_is_someone_elses() -> None:
    node = one("show_node_o_drain_reboot_requested_23.11.3_derived.txt")
    assert node.state.flags == ["DRAIN", "REBOOT_REQUESTED"]
    assert node.state.reboot_pending
    assert node.reason == "Reboot ASAP"
    assert node.fields["NextState"] == "RESUME"
    assert node.owner == "other"


def test_hwaac_drain_is_owned() -> None:
    node = one("show_node_o_hwaac_drain_23.11.3_derived.txt")
    assert node.reason == "hwaac: GPU_XID_79 gpu 3 fell off the bus"
    assert node.owner == "hwaac"
    assert not node.state.reboot_pending


def test_not_found() -> None:
    text = (FIX / "show_node_not_found_derived.txt").read_text()
    assert not_found_in(text) == "node999"
    with pytest.raises(SlurmError, match="Node node999 not found"):
        find_node(text, "node999")
    with pytest.raises(SlurmError, match="no record for node node007"):
        find_node((FIX / "show_node_o_idle_23.11.3.txt").read_text(), "node007")


def test_several_records_and_errors() -> None:
    text = (
        (FIX / "show_node_idle_drain_20.11.0.txt").read_text()
        + "\n"
        + (FIX / "show_node_o_idle_23.11.3.txt").read_text()
    )
    assert [n.name for n in parse_show_node(text)] == ["node002", "node001"]
    assert find_node(text, "node001").state.raw == "IDLE"
    with pytest.raises(SlurmError, match="unexpected scontrol output"):
        parse_show_node("slurm_load_node error: Unable to contact slurm controller (connect failure)\n")
    with pytest.raises(SlurmError, match="no State="):
        parse_show_node("NodeName=x Arch=x86_64\n")


def test_reason_without_marker_ends_before_the_fields_printed_after_it() -> None:
    node = parse_show_node("NodeName=n1 State=IDLE+DRAIN Reason=a=b c Comment=x y ReservationName=r1\n")[0]
    assert node.reason == "a=b c"
    assert node.reason_user == ""
    assert node.fields["Comment"] == "x y"
    assert node.fields["ReservationName"] == "r1"
    assert "b" not in node.fields  # a = inside the reason is not a field


@pytest.mark.parametrize(
    ("raw", "base", "flags", "drain", "offline", "reboot", "not_responding"),
    [
        ("IDLE", "IDLE", [], False, False, False, False),
        ("ALLOCATED", "ALLOCATED", [], False, False, False, False),
        ("MIXED+DRAIN", "MIXED", ["DRAIN"], True, True, False, False),
        ("DOWN*", "DOWN", [], False, True, False, True),
        ("DOWN+DRAIN+NOT_RESPONDING", "DOWN", ["DRAIN", "NOT_RESPONDING"], True, True, False, True),
        ("IDLE+DRAIN+REBOOT_REQUESTED", "IDLE", ["DRAIN", "REBOOT_REQUESTED"], True, True, True, False),
        ("ALLOCATED+REBOOT_REQUESTED", "ALLOCATED", ["REBOOT_REQUESTED"], False, False, True, False),
        ("REBOOT*+DRAIN", "REBOOT", ["DRAIN"], True, True, True, True),  # Slurm 20.11 while booting (nhc PR #84)
        ("DRAINED", "DRAINED", [], True, True, False, False),
        ("DRAINED@", "DRAINED", [], True, True, True, False),
        ("MIXED^", "MIXED", [], False, False, True, False),
        ("IDLE+FAIL", "IDLE", ["FAIL"], False, True, False, False),
        ("IDLE+CLOUD+MAINTENANCE+RESERVED", "IDLE", ["CLOUD", "MAINTENANCE", "RESERVED"], False, False, False, False),
    ],
)
def test_state_strings(raw, base, flags, drain, offline, reboot, not_responding) -> None:
    st = SlurmState(raw)
    assert (st.base, st.flags) == (base, flags)
    assert st.drain is drain
    assert st.offline is offline
    assert st.reboot_pending is reboot
    assert st.not_responding is not_responding


def test_predicted_states_follow_slurms_flag_order() -> None:
    assert predict_drained("IDLE") == "IDLE+DRAIN"
    assert predict_drained("MIXED") == "MIXED+DRAIN"
    assert predict_drained("ALLOCATED+RESERVED") == "ALLOCATED+DRAIN+RESERVED"
    assert predict_drained("IDLE+CLOUD") == "IDLE+CLOUD+DRAIN"
    assert predict_drained("IDLE+DRAIN") == "IDLE+DRAIN"
    assert predict_resumed("IDLE+DRAIN") == "IDLE"
    assert predict_resumed("MIXED+DRAIN") == "MIXED"
    assert predict_resumed("DOWN+DRAIN") == "IDLE"
    assert predict_resumed("IDLE+DRAIN+MAINTENANCE+RESERVED") == "IDLE+MAINTENANCE+RESERVED"
    assert predict_resumed("DRAINED") == "IDLE"


def test_hwaac_reason() -> None:
    assert hwaac_reason("GPU 3 XID 79") == "hwaac: GPU 3 XID 79"
    assert hwaac_reason("  hwaac: kept  ") == "hwaac: kept"
    assert hwaac_reason("hwaac:tight") == "hwaac:tight"
    for bad, msg in [("", "required"), ("   ", "required"), ("a\nb", "one line"), ("hwaac:", "needs text")]:
        with pytest.raises(SlurmError, match=msg):
            hwaac_reason(bad)
