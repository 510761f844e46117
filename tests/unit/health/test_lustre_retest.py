"""The Lustre client evaluation (hwaac.health.lustre.evaluate) keeps the rule "an incomplete parse leads only to a
retest": for each probe, a recorded (or derived) output that recommends a link repair or a reboot does so when read
completely, and the same output cut short recommends only a retest, with the fault still named. Outputs from
tests/fixtures/health/lustre and tests/fixtures/tools/lfs (sources in their READMEs)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hwaac.health.lustre import client_verdict, evaluate, expected_filesystems
from hwaac.health.result import DESTRUCTIVE_ACTIONS, Action, Finding, Status

FIX = Path(__file__).parents[2] / "fixtures"
LFS = FIX / "tools" / "lfs"
HEALTH = FIX / "health" / "lustre"
FS = expected_filesystems(
    [{"name": "lfs1", "mgs": [["10.20.0.1@o2ib", "10.20.1.1@o2ib"], ["10.20.0.3@o2ib"]], "mount_point": "/mnt/lfs1"}]
)
NIDS = ("10.20.0.1@o2ib", "10.20.1.1@o2ib", "10.20.0.3@o2ib")
MOUNTS = (
    "proc /proc proc rw 0 0\n"
    "10.20.0.1@o2ib,10.20.1.1@o2ib:10.20.0.3@o2ib:/lfs1 /mnt/lfs1 lustre rw,flock,lazystatfs 0 0\n"
)
LFS_OK = (
    "lfs1-OST0000-osc-ffff9c2a4e1b8000 active.\nlfs1-OST0001-osc-ffff9c2a4e1b8000 active.\n"
    "lfs1-MDT0000-mdc-ffff9c2a4e1b8000 active.\nMGC10.20.0.1@o2ib active.\n"
)

Outputs = dict[str, dict]


def out(stdout: str = "", stderr: str = "", rc: int | None = 0) -> dict:
    return {"rc": rc, "stdout": stdout, "stderr": stderr, "seconds": 0.1, "timed_out": False}


def healthy() -> Outputs:
    outputs = {
        "lfs_check": out(LFS_OK),
        "health_check": out((HEALTH / "health_check_healthy_derived.txt").read_text()),
        "imports": out((HEALTH / "imports_master_full_derived.txt").read_text()),
        "lnet_net": out((HEALTH / "lnetctl_export_net_2.12_lustrefs_exporter.txt").read_text()),
    }
    return outputs | {f"ping {nid}": out(f"12345-0@lo\n12345-{nid}\n") for nid in NIDS}


def failed_ping(nid: str) -> dict:
    return out("", f"failed to ping {nid}: Input/output error\n", rc=1)


def torn(o: dict, tail: str) -> dict:
    """The same output with a last line cut mid-way (a paste or a capture that ended early)."""
    stream = "stderr" if o["stderr"] else "stdout"
    return {**o, stream: o[stream] + tail}


def all_pings_failed(o: Outputs) -> Outputs:
    return o | {f"ping {nid}": failed_ping(nid) for nid in NIDS}


def one_ping_failed(o: Outputs) -> Outputs:
    return o | {"ping 10.20.1.1@o2ib": failed_ping("10.20.1.1@o2ib")}


CUT_PING = "failed to p"
NEXT_IMPORT = (
    "osc.lfs1-OST0009-osc-ffff9c2a4e1b8000.import=\nimport:\n"
    "    name: lfs1-OST0009-osc-ffff9c2a4e1b8000\n    targ"
)  # the next import block, cut in a key
CASES: list[tuple[str, str, Callable[[Outputs], Outputs], Callable[[Outputs], Outputs], bool]] = [
    # name, the code recommending a destructive action, the fault (complete), the same fault cut short, whether
    # the cut output still shows the fault (then it is named, withheld; else the parser read nothing of it)
    (
        "no MGS NID answers",
        "LUSTRE_MGS_UNREACHABLE",
        all_pings_failed,
        lambda o: all_pings_failed(o) | {"ping 10.20.0.3@o2ib": torn(failed_ping("10.20.0.3@o2ib"), CUT_PING)},
        True,
    ),
    (
        "one MGS NID silent",
        "LUSTRE_MGS_NID_UNREACHABLE",
        one_ping_failed,
        lambda o: o | {"ping 10.20.1.1@o2ib": torn(failed_ping("10.20.1.1@o2ib"), CUT_PING)},
        True,
    ),
    (
        "an OST not connected (lfs check)",
        "LUSTRE_TARGET_INACTIVE",
        lambda o: (
            o
            | {
                "lfs_check": out(
                    (LFS / "check_servers_master_derived.stdout").read_text(),
                    (LFS / "check_servers_master_derived.stderr").read_text(),
                )
            }
        ),
        lambda o: (
            o
            | {
                "lfs_check": torn(
                    out(
                        (LFS / "check_servers_master_derived.stdout").read_text()
                        + (LFS / "check_servers_master_derived.stderr").read_text()
                    ),
                    "lfs1-OST0004-osc-ffff9c2a4e1b8000 act",
                )
            }
        ),
        True,
    ),
    (
        "an evicted import",
        "LUSTRE_IMPORT_EVICTED",
        lambda o: o | {"imports": out((HEALTH / "imports_master_bad_derived.txt").read_text())},
        lambda o: o | {"imports": torn(out((HEALTH / "imports_master_bad_derived.txt").read_text()), NEXT_IMPORT)},
        True,
    ),
    (
        "an LBUG",
        "LUSTRE_LBUG",
        lambda o: o | {"health_check": out("LBUG\n")},
        lambda o: o | {"health_check": torn(out("LBUG\n"), "NOT HEAL")},
        True,
    ),
    (
        "an LNet NI down",
        "LUSTRE_LNET_NI_DOWN",
        lambda o: o | {"lnet_net": out((HEALTH / "lnetctl_net_show_v2_2.15_o2ib_derived.txt").read_text())},
        lambda o: (
            o
            | {
                "lnet_net": torn(
                    out((HEALTH / "lnetctl_net_show_v2_2.15_o2ib_derived.txt").read_text()),
                    "        - nid: 10.20.2.5@o2ib\n          stat",
                )
            }
        ),
        False,
    ),  # no YAML left
    (
        "an OST whose statfs fails (lfs df)",
        "LUSTRE_TARGET_UNREACHABLE",
        lambda o: o | {"lfs_df": out((LFS / "df_v_inactive_error_degraded_derived.txt").read_text())},
        lambda o: (
            o
            | {
                "lfs_df": torn(
                    out((LFS / "df_v_inactive_error_degraded_derived.txt").read_text()), "exacloud-OST0018_UUID   5294"
                )
            }
        ),
        True,
    ),
]


def judge(outputs: Outputs) -> list[Finding]:
    return evaluate(outputs, FS, proc_mounts=MOUNTS)


@pytest.mark.parametrize(("code", "fault", "cut", "seen"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_cut_output_withholds_the_destructive_action(
    code: str, fault: Callable[[Outputs], Outputs], cut: Callable[[Outputs], Outputs], seen: bool
) -> None:
    complete = [f for f in judge(fault(healthy())) if f.code == code]
    assert complete and all(f.action in DESTRUCTIVE_ACTIONS for f in complete)  # the case exercises the rule
    found = judge(cut(healthy()))
    assert not [f for f in found if f.action in DESTRUCTIVE_ACTIONS]
    withheld = [f for f in found if f.code == code]
    assert bool(withheld) is seen
    assert all((f.status, f.action) == (Status.UNKNOWN, Action.RETEST) and "withheld" in f.message for f in withheld)
    v = client_verdict("gpu-node-01", found)
    assert (v.status, v.action) == (Status.UNKNOWN, Action.RETEST)


def test_a_cut_ping_of_another_file_systems_mgs_withholds_nothing_here() -> None:
    """The rule holds per file system: lfs2's cut ping does not soften lfs1's unreachable MGS."""
    fs = [*FS, *expected_filesystems([{"name": "lfs2", "mgs": [["10.30.0.1@o2ib"]], "mount_point": "/mnt/lfs2"}])]
    mounts = MOUNTS + "10.30.0.1@o2ib:/lfs2 /mnt/lfs2 lustre rw 0 0\n"
    outputs = all_pings_failed(healthy()) | {
        "ping 10.30.0.1@o2ib": torn(out("12345-0@lo\n12345-10.30.0.1@o2ib\n"), "12345-10.30")
    }
    found = evaluate(outputs, fs, proc_mounts=mounts)
    [lfs1] = [f for f in found if f.code == "LUSTRE_MGS_UNREACHABLE"]
    assert (lfs1.subject, lfs1.status, lfs1.action) == ("lfs1", Status.FAIL, Action.CHECK_LINK)
