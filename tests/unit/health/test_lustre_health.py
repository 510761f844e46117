"""A Lustre client's evaluation (hwaac.health.lustre): probe outputs built from the recorded fixtures, judged
against the expected file systems of lustre-client.json."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.health.lustre import (
    all_mgs_nids,
    client_verdict,
    commands,
    compare_mgs,
    evaluate,
    expected_filesystems,
)
from hwaac.health.result import Action, Status

FIX = Path(__file__).parents[2] / "fixtures"
LFS = FIX / "tools" / "lfs"
HEALTH = FIX / "health" / "lustre"

CLIENT_JSON_FS = [
    {
        "name": "lfs1",
        "mgs": [["10.20.0.1@o2ib", "10.20.1.1@o2ib"], ["10.20.0.3@o2ib"]],
        "mount_point": "/mnt/lfs1",
        "options": ["flock", "_netdev"],
        "tunables": {},
    }
]
MOUNTS = (
    "proc /proc proc rw 0 0\n"
    "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.3@o2ib:/lfs1 /mnt/lfs1 lustre rw,flock,lazystatfs 0 0\n"
)
LFS_OK = (
    "lfs1-OST0000-osc-ffff9c2a4e1b8000 active.\nlfs1-OST0001-osc-ffff9c2a4e1b8000 active.\n"
    "lfs1-MDT0000-mdc-ffff9c2a4e1b8000 active.\nMGC10.20.0.1@o2ib active.\n"
)


def out(stdout: str = "", stderr: str = "", rc: int | None = 0, timed_out: bool = False) -> dict:
    return {"rc": rc, "stdout": stdout, "stderr": stderr, "seconds": 0.1, "timed_out": timed_out}


def ping_ok(nid: str) -> dict:
    return out(f"12345-0@lo\n12345-{nid}\n")


def ping_failed(nid: str) -> dict:
    return out("", f"failed to ping {nid}: Input/output error\n", rc=1)


def healthy_outputs() -> dict[str, dict]:
    outputs = {
        "lfs_check": out(LFS_OK),
        "health_check": out((HEALTH / "health_check_healthy_derived.txt").read_text()),
        "imports": out((HEALTH / "imports_master_full_derived.txt").read_text()),
        "lnet_net": out((HEALTH / "lnetctl_export_net_2.12_lustrefs_exporter.txt").read_text()),
    }
    for nid in ("10.20.0.1@o2ib", "10.20.1.1@o2ib", "10.20.0.3@o2ib"):
        outputs[f"ping {nid}"] = ping_ok(nid)
    return outputs


@pytest.fixture
def fs():
    return expected_filesystems(CLIENT_JSON_FS)


def judge(outputs, fs, mounts=MOUNTS, **kw):
    return client_verdict("gpu-node-01", evaluate(outputs, fs, proc_mounts=mounts, **kw))


def test_healthy_client_passes(fs) -> None:
    v = judge(healthy_outputs(), fs)
    assert (v.status, v.action, v.findings) == (Status.PASS, Action.NONE, [])
    assert v.stages == {"lustre": Status.PASS}


def test_commands_ping_every_mgs_nid_once(fs) -> None:
    nids = all_mgs_nids(fs + expected_filesystems([{"name": "lfs2", "mgs": [["10.20.0.3@o2ib"]]}]))
    assert nids == ["10.20.0.1@o2ib", "10.20.1.1@o2ib", "10.20.0.3@o2ib"]
    probes = commands(nids)
    assert probes["lfs_check"] == ["lfs", "check", "servers"]
    assert probes["health_check"] == ["lctl", "get_param", "-n", "health_check"]
    assert probes["imports"] == ["lctl", "get_param", "osc.*.import", "mdc.*.import"]
    assert probes["ping 10.20.1.1@o2ib"] == ["lctl", "ping", "10.20.1.1@o2ib"]
    assert probes["lnet_net"] == ["lnetctl", "net", "show", "-v", "2"]  # -v alone is detail 1: no health stats
    assert "lnet_net" not in commands(nids, lnet=False)


def test_not_mounted_fails_with_the_mount_action(fs) -> None:
    outputs = healthy_outputs()
    outputs["lfs_check"] = out((LFS / "check_not_mounted_derived.txt").read_text(), rc=19)
    outputs["imports"] = out("", (HEALTH / "imports_not_mounted_derived.txt").read_text(), rc=2)
    v = judge(outputs, fs, mounts="proc /proc proc rw 0 0\n")
    assert v.status == Status.FAIL and v.codes == ["LUSTRE_NOT_MOUNTED"]
    assert v.findings[0].subject == "lfs1" and "lustre_mount" in v.findings[0].message


def test_mounted_elsewhere_warns(fs) -> None:
    v = judge(healthy_outputs(), fs, mounts=MOUNTS.replace("/mnt/lfs1", "/lfs1"))
    assert v.status == Status.WARN and v.codes == ["LUSTRE_MOUNTED_ELSEWHERE"]


def with_source(source: str) -> str:
    return MOUNTS.replace("10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.3@o2ib:/lfs1", source)


@pytest.mark.parametrize(
    "source",
    [
        "10.20.1.1@o2ib0,10.20.0.1@o2ib:10.20.0.3@o2ib0:/lfs1",  # o2ib0 == o2ib; NIDs of one node in another order
        "10.20.0.3@o2ib:10.20.0.1@o2ib,10.20.1.1@o2ib:/lfs1",  # failover nodes in another order: the same MGS set
        "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.3@o2ib:/lfs1/projects",  # a subdirectory mount of the same fs
    ],
)
def test_mgs_source_written_differently_is_the_same(fs, source: str) -> None:
    v = judge(healthy_outputs(), fs, mounts=with_source(source))
    assert (v.status, v.codes) == (Status.PASS, [])


def test_expected_o2ib0_matches_the_o2ib_that_proc_mounts_shows() -> None:
    fs = expected_filesystems(
        [{**CLIENT_JSON_FS[0], "mgs": [["10.20.0.1@o2ib0", "10.20.1.1@o2ib0"], ["10.20.0.3@o2ib0"]]}]
    )
    outputs = healthy_outputs()
    for nid in ("10.20.0.1@o2ib0", "10.20.1.1@o2ib0", "10.20.0.3@o2ib0"):
        outputs[f"ping {nid}"] = ping_ok(nid.replace("o2ib0", "o2ib"))
    v = judge(outputs, fs)
    assert (v.status, v.codes) == (Status.PASS, [])


def test_mounted_from_another_mgs_fails(fs) -> None:
    source = "10.30.0.1@o2ib,10.30.1.1@o2ib:/lfs1"
    v = judge(healthy_outputs(), fs, mounts=with_source(source))
    assert (v.status, v.codes, v.action) == (Status.FAIL, ["LUSTRE_MOUNTED_FROM_OTHER_MGS"], Action.NONE)
    [finding] = v.findings
    assert finding.subject == "lfs1" and finding.evidence == source
    assert "mounted from MGS 10.30.0.1@o2ib,10.30.1.1@o2ib" in finding.message
    assert "expected 10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.3@o2ib" in finding.message
    assert "lustre_mount" in finding.message


def test_same_addresses_on_another_lnet_network_are_another_mgs(fs) -> None:
    v = judge(healthy_outputs(), fs, mounts=with_source("10.20.0.1@o2ib1,10.20.1.1@o2ib1:10.20.0.3@o2ib1:/lfs1"))
    assert v.codes == ["LUSTRE_MOUNTED_FROM_OTHER_MGS"]  # o2ib1 is not o2ib (only number 0 is dropped)


def test_mounted_elsewhere_from_another_mgs_reports_both(fs) -> None:
    mounts = with_source("10.30.0.1@o2ib:/lfs1").replace("/mnt/lfs1", "/lfs1")
    v = judge(healthy_outputs(), fs, mounts=mounts)
    assert v.status == Status.FAIL and v.codes == ["LUSTRE_MOUNTED_ELSEWHERE", "LUSTRE_MOUNTED_FROM_OTHER_MGS"]


@pytest.mark.parametrize(
    "source",
    [
        "10.20.0.1@o2ib,10.20.1.1@o2ib:/lfs1",  # the failover MGS node is missing
        "10.20.0.1@o2ib:10.20.0.3@o2ib:/lfs1",  # a NID of the first node is missing
        "10.20.0.1@o2ib:10.20.1.1@o2ib:10.20.0.3@o2ib:/lfs1",  # one node's NIDs given as two failover nodes
        "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.3@o2ib:10.30.0.9@o2ib:/lfs1",  # an MGS node the intent does not name
    ],
)
def test_mgs_list_differing_from_the_intent_warns(fs, source: str) -> None:
    v = judge(healthy_outputs(), fs, mounts=with_source(source))
    assert (v.status, v.codes) == (Status.WARN, ["LUSTRE_MGS_LIST_DIFFERS"])
    assert v.findings[0].evidence == source and "10.20.0.3@o2ib" in v.findings[0].message


def test_bare_fsname_has_no_mgs_to_compare() -> None:
    v = judge(healthy_outputs(), expected_filesystems(["lfs1"]), mounts=with_source("10.30.0.1@o2ib:/lfs1"))
    assert "LUSTRE_MOUNTED_FROM_OTHER_MGS" not in v.codes and "LUSTRE_MGS_LIST_DIFFERS" not in v.codes


def test_host_name_mgs_nids_are_matched_through_the_peer_nids_lctl_ping_lists() -> None:
    """mount.lustre resolves host names before mount(2), so /proc/mounts shows addresses; ``lctl ping
    mgs01@o2ib`` resolves the name on the node the same way and the peer answers with its NIDs."""
    fs = expected_filesystems([{**CLIENT_JSON_FS[0], "mgs": [["mgs01@o2ib"], ["10.20.0.3@o2ib"]]}])
    outputs = healthy_outputs()
    outputs["ping mgs01@o2ib"] = out("12345-0@lo\n12345-10.20.0.1@o2ib\n12345-10.20.1.1@o2ib\n")
    v = judge(outputs, fs, mounts=with_source("10.20.0.1@o2ib:10.20.0.3@o2ib:/lfs1"))
    assert (v.status, v.codes) == (Status.PASS, [])
    v = judge(outputs, fs, mounts=with_source("10.30.0.1@o2ib:10.30.0.3@o2ib:/lfs1"))
    assert v.codes == ["LUSTRE_MOUNTED_FROM_OTHER_MGS"]
    outputs["ping mgs01@o2ib"] = ping_failed("mgs01@o2ib")  # the name is not resolved: only the ping is reported
    v = judge(outputs, fs, mounts=with_source("10.20.0.1@o2ib:10.20.0.3@o2ib:/lfs1"))
    assert (v.status, v.codes) == (Status.WARN, ["LUSTRE_MGS_NID_UNREACHABLE"])


def test_compare_mgs_outcomes() -> None:
    expected = (("10.20.0.1@o2ib", "10.20.1.1@o2ib"), ("10.20.0.3@o2ib",))
    assert compare_mgs((("10.20.1.1@o2ib", "10.20.0.1@o2ib0"), ("10.20.0.3@o2ib",)), expected) == "same"
    assert compare_mgs((("10.20.0.1@o2ib",), ("10.20.0.3@o2ib",)), expected) == "differs"
    assert compare_mgs((("10.30.0.1@o2ib",),), expected) == "other"
    named = (("mgs01@o2ib",), ("10.20.0.3@o2ib",))
    assert compare_mgs((("10.20.0.1@o2ib",), ("10.20.0.3@o2ib",)), named) == "unverified"
    assert (
        compare_mgs(
            (("10.20.0.1@o2ib",), ("10.20.0.3@o2ib",)),
            named,
            {"mgs01@o2ib": ["10.20.0.1@o2ib", "10.20.1.1@o2ib", "192.168.0.1@tcp"]},
        )
        == "same"
    )
    assert (
        compare_mgs(
            (("192.168.0.1@tcp",), ("10.20.0.3@o2ib",)), named, {"mgs01@o2ib": ["10.20.0.1@o2ib", "192.168.0.1@tcp"]}
        )
        == "differs"
    )  # other net


def test_one_mgs_nid_down_is_warn_all_down_is_fail(fs) -> None:
    outputs = healthy_outputs()
    outputs["ping 10.20.1.1@o2ib"] = ping_failed("10.20.1.1@o2ib")
    v = judge(outputs, fs)
    assert v.status == Status.WARN and v.codes == ["LUSTRE_MGS_NID_UNREACHABLE"]
    assert v.findings[0].subject == "10.20.1.1@o2ib"
    for nid in ("10.20.0.1@o2ib", "10.20.0.3@o2ib"):
        outputs[f"ping {nid}"] = ping_failed(nid)
    v = judge(outputs, fs)
    assert v.status == Status.FAIL and v.codes == ["LUSTRE_MGS_UNREACHABLE"] and v.action == Action.CHECK_LINK
    assert v.findings[0].subject == "lfs1"


def test_failover_mgs_node_answering_keeps_the_fs_reachable(fs) -> None:
    outputs = healthy_outputs()
    for nid in ("10.20.0.1@o2ib", "10.20.1.1@o2ib"):  # the whole first MGS node is away
        outputs[f"ping {nid}"] = ping_failed(nid)
    v = judge(outputs, fs)
    assert v.status == Status.WARN and v.codes == ["LUSTRE_MGS_NID_UNREACHABLE"]
    assert sorted(f.subject for f in v.findings) == ["10.20.0.1@o2ib", "10.20.1.1@o2ib"]


def test_inactive_target_and_bad_imports_fail(fs) -> None:
    outputs = healthy_outputs()
    outputs["lfs_check"] = out(
        (LFS / "check_servers_master_derived.stdout").read_text(),
        (LFS / "check_servers_master_derived.stderr").read_text(),
    )
    outputs["imports"] = out((HEALTH / "imports_master_bad_derived.txt").read_text())
    v = judge(outputs, fs)
    assert v.status == Status.FAIL and v.action == Action.CHECK_LINK
    assert v.codes == [
        "LUSTRE_IMPORT_EVICTED",
        "LUSTRE_IMPORT_NOT_FULL",
        "LUSTRE_IMPORT_RECOVERING",
        "LUSTRE_TARGET_INACTIVE",
    ]


def test_lbug_wants_a_reboot(fs) -> None:
    outputs = healthy_outputs()
    outputs["health_check"] = out("LBUG\n")
    v = judge(outputs, fs)
    assert v.status == Status.FAIL and v.codes == ["LUSTRE_LBUG"] and v.action == Action.REBOOT


def test_lnet_rail_down_fails(fs) -> None:
    outputs = healthy_outputs()
    outputs["lnet_net"] = out((HEALTH / "lnetctl_net_show_v2_2.15_o2ib_derived.txt").read_text())
    v = judge(outputs, fs)
    assert v.status == Status.FAIL
    assert v.codes == ["LUSTRE_LNET_NI_DEGRADED", "LUSTRE_LNET_NI_DOWN", "LUSTRE_LNET_NI_FATAL"]


def test_lnet_output_without_health_stats_is_unknown_not_pass(fs) -> None:
    """The recorded ``lnetctl net show -v`` (detail 1, sosreport PR #3749) has no ``health stats``: the NI's health
    was not read, so the client is not healthy but UNKNOWN."""
    outputs = healthy_outputs()
    outputs["lnet_net"] = out((FIX / "tools" / "lnetctl" / "2.15" / "net_show_v_tcp.txt").read_text())
    v = judge(outputs, fs)
    assert (v.status, v.action, v.codes) == (Status.UNKNOWN, Action.RETEST, ["LUSTRE_LNET_HEALTH_MISSING"])


@pytest.mark.parametrize("probe", ["lfs_check", "health_check", "imports", "ping 10.20.0.3@o2ib", "lnet_net"])
def test_timed_out_or_missing_tool_is_unknown_never_pass(fs, probe: str) -> None:
    outputs = healthy_outputs()
    outputs[probe] = out("", "", rc=None, timed_out=True)
    v = judge(outputs, fs)
    assert v.status == Status.UNKNOWN and v.action == Action.RETEST and "PROBE_TIMEOUT" in v.codes
    outputs[probe] = out("", "cannot run lctl: No such file or directory", rc=None)
    assert "PROBE_NOT_RUN" in judge(outputs, fs).codes


@pytest.mark.parametrize("probe", ["lfs_check", "health_check", "imports", "ping 10.20.1.1@o2ib"])
def test_missing_probe_output_is_unknown(fs, probe: str) -> None:
    outputs = healthy_outputs()
    del outputs[probe]
    v = judge(outputs, fs)
    assert v.status == Status.UNKNOWN and "PROBE_MISSING" in v.codes


@pytest.mark.parametrize("probe", ["lfs_check", "health_check", "imports", "ping 10.20.1.1@o2ib", "lnet_net"])
def test_garbage_probe_output_is_unknown(fs, probe: str) -> None:
    outputs = healthy_outputs()
    outputs[probe] = out("Segmentation fault\n")
    assert judge(outputs, fs).status == Status.UNKNOWN


def test_mounted_fs_without_osts_in_lfs_check_is_unknown(fs) -> None:
    outputs = healthy_outputs()
    outputs["lfs_check"] = out("lfs1-MDT0000-mdc-ffff9c2a4e1b8000 active.\n")
    v = judge(outputs, fs)
    assert v.status == Status.UNKNOWN and v.codes == ["LUSTRE_TARGETS_MISSING"]
    outputs = healthy_outputs()
    outputs["imports"] = out((HEALTH / "import_2.12.7_idle_transactions_derived.txt").read_text())  # fs "temp"
    v = judge(outputs, fs)
    assert v.status == Status.UNKNOWN and v.codes == ["LUSTRE_IMPORTS_MISSING"]


def test_proc_mounts_unread_is_unknown(fs) -> None:
    v = judge(healthy_outputs(), fs, mounts=None)
    assert v.status == Status.UNKNOWN and v.codes == ["LUSTRE_MOUNTS_UNREAD"]


@pytest.mark.parametrize("cut_after", ["10.20.0.1@o2ib,10.20", "/mnt/lfs1 lustre rw,flo", "proc /proc proc rw 0"])
def test_proc_mounts_cut_inside_a_line_is_unknown_not_unmounted(fs, cut_after: str) -> None:
    """The kernel prints six fields a line (show_vfsmnt()): a last line with fewer was cut, and the mount it held
    (or the ones after it) is unknown, not absent."""
    v = judge(healthy_outputs(), fs, mounts=MOUNTS[: MOUNTS.index(cut_after) + len(cut_after)])
    assert v.status == Status.UNKNOWN and v.codes == ["LUSTRE_MOUNTS_UNREAD"]
    assert "cut short" in v.findings[0].message


def test_lfs_says_nothing_mounted_but_proc_mounts_disagrees(fs) -> None:
    outputs = healthy_outputs()
    outputs["lfs_check"] = out((LFS / "check_not_mounted_derived.txt").read_text(), rc=19)
    v = judge(outputs, fs)
    assert v.status == Status.UNKNOWN and v.codes == ["LUSTRE_MOUNT_STATE_CONFLICT"]


def test_nothing_expected_is_unknown() -> None:
    v = judge(healthy_outputs(), [])
    assert v.status == Status.UNKNOWN and v.codes == ["LUSTRE_NOTHING_EXPECTED"]


def test_extra_mgs_nids_without_filesystems() -> None:
    outputs = {
        "lfs_check": out(LFS_OK),
        "health_check": out("healthy\n"),
        "imports": out((HEALTH / "imports_master_full_derived.txt").read_text()),
        "ping 10.20.0.9@o2ib": ping_failed("10.20.0.9@o2ib"),
    }
    v = judge(outputs, [], mgs_nids=["10.20.0.9@o2ib"])
    assert v.status == Status.FAIL and v.codes == ["LUSTRE_MGS_UNREACHABLE"] and v.findings[0].subject == "mgs"


@pytest.mark.parametrize(
    ("items", "field"),
    [
        ([{"name": "much_too_long"}], "filesystems[0].name"),
        ([{"name": "lfs1", "mgs": ["10.20.0.1@o2ib"]}], "filesystems[0].mgs"),
        ([{"name": "lfs1", "mgs": [["not-a-nid"]]}], "filesystems[0].mgs"),
        ([{"name": "ok"}, {"name": "bad-name"}], "filesystems[1].name"),
    ],
)
def test_bad_expectations_name_the_field(items, field: str) -> None:
    with pytest.raises(ValueError, match=field.replace("[", r"\[").replace("]", r"\]")):
        expected_filesystems(items)
    with pytest.raises(ValueError, match="mgs_nids"):
        all_mgs_nids([], ["10.20.0.1"])


def test_bare_fsnames_are_accepted() -> None:
    [fs] = expected_filesystems(["lfs1"])
    assert (fs.name, fs.mgs, fs.mount_point) == ("lfs1", (), "")
