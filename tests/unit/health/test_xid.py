"""The XID action table (hwaac.health.xid) against NVIDIA's map as transcribed in data/xid_catalog.yml."""

from __future__ import annotations

import pytest

from hwaac.health.result import Action, Status
from hwaac.health.xid import (
    benign_sxids,
    catalog_source,
    is_benign_sxid,
    recovery_action,
    xid_action,
    xid_table,
)


def test_catalog_is_the_whole_csv_with_its_source():
    # NVSentinel xiderrorsmapping.csv at e712af97 has rows 1..162, no gaps.
    assert sorted(xid_table()) == list(range(1, 163))
    assert catalog_source() == {
        "repository": "NVIDIA/NVSentinel",
        "path": "distros/kubernetes/nvsentinel/charts/gpu-health-monitor/xiderrorsmapping.csv",
        "commit": "e712af97f39114c3ad725bb3db42793922529667",
    }


@pytest.mark.parametrize(
    ("xid", "nvidia_action", "action", "status"),
    [
        (13, "RESTART_APP", Action.RESTART_APP, Status.WARN),  # app fault
        (31, "RESTART_APP", Action.RESTART_APP, Status.WARN),
        (43, "IGNORE", Action.NONE, Status.WARN),
        (45, "WORKFLOW_XID_45", Action.NONE, Status.WARN),
        (48, "WORKFLOW_XID_48", Action.RESET_GPU, Status.FAIL),  # DBE
        (63, "IGNORE", Action.NONE, Status.WARN),  # row-remap event (the remap check catches the pending reset)
        (64, "RESET_GPU", Action.RESET_GPU, Status.FAIL),  # row-remap failure
        (74, "WORKFLOW_NVLINK_ERR", Action.RESET_GPU, Status.FAIL),
        (79, "RESTART_BM", Action.REBOOT, Status.FAIL),  # fallen off the bus
        (92, "IGNORE", Action.NONE, Status.WARN),
        (94, "RESTART_APP", Action.RESTART_APP, Status.WARN),  # contained ECC
        (95, "RESET_GPU", Action.RESET_GPU, Status.FAIL),  # uncontained ECC
        (119, "RESET_GPU", Action.RESET_GPU, Status.FAIL),
        (120, "RESET_GPU", Action.RESET_GPU, Status.FAIL),
        (144, "WORKFLOW_NVLINK5_ERR", Action.RESET_GPU, Status.FAIL),
        (54, "CHECK_MECHANICALS", Action.CHECK_LINK, Status.FAIL),
        (1, "UNEXPECTED_ERR_REPORT_ISSUE", Action.REBOOT, Status.FAIL),
        (151, "RESTART_VM", Action.REBOOT, Status.FAIL),
        (109, "RESET_GPU", Action.RESET_GPU, Status.WARN),  # NONFATAL in NVIDIA's map
    ],
)
def test_domain_note_rows(xid, nvidia_action, action, status):
    info = xid_action(xid)
    assert (info.nvidia_action, info.action, info.status, info.listed) == (nvidia_action, action, status, True)
    assert info.code == f"GPU_XID_{xid}"


def test_mnemonics_are_stripped_and_154_follows_another_xid():
    assert xid_action(79).mnemonic == "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"
    assert xid_action(141).mnemonic == "ROBUST_CHANNEL_FAST_PATH_ERROR"  # trailing space in the source
    assert xid_action(162).mnemonic == ""  # empty in the source
    info = xid_action(154)
    assert (info.action, info.status, info.fatal) == (Action.NONE, Status.WARN, False)


def test_fatal_rows_fail_and_nonfatal_rows_warn():
    for info in xid_table().values():
        assert info.status is (Status.FAIL if info.fatal else Status.WARN)


@pytest.mark.parametrize("xid", [0, 171, 999])
def test_unlisted_xid_is_unknown_and_retest(xid):
    info = xid_action(xid)
    assert (info.listed, info.status, info.action, info.mnemonic) == (False, Status.UNKNOWN, Action.RETEST, "")


def test_benign_sxids():
    # imbue cluster-health WHITELISTED_NVSWITCH_SXID_ERRORS
    assert len(benign_sxids()) == 20
    assert is_benign_sxid(11012) and is_benign_sxid(24003)
    assert not is_benign_sxid(12028) and not is_benign_sxid(20034)


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("None", Action.NONE),
        ("Reset", Action.RESET_GPU),
        ("Node Reboot", Action.REBOOT),
        ("Drain P2P", Action.RESET_GPU),
        ("drain and reset", Action.RESET_GPU),
        ("0x4 (Drain and Reset)", Action.RESET_GPU),
        ("0x0 (None)", Action.NONE),
        ("2", Action.REBOOT),
        ("0x7", None),
        ("Reboot the moon", None),
        ("", None),
    ],
)
def test_recovery_action(text, action):
    assert recovery_action(text) is action
