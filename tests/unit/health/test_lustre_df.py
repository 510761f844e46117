"""lfs df / lfs df -i: facts from recorded outputs (fixtures/tools/lfs, sources in its README), the target
findings (hwaac.health.lustre_targets) and the optional lfs_df probe of the client evaluation."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.health.lustre import client_verdict, commands, evaluate, expected_filesystems
from hwaac.health.lustre_targets import df_findings
from hwaac.health.parsers.lustre_df import parse_lfs_df
from hwaac.health.result import Action, Status
from tests.unit.health.test_lustre_health import CLIENT_JSON_FS, MOUNTS, healthy_outputs, out

LFS = Path(__file__).parents[2] / "fixtures" / "tools" / "lfs"


def read(name: str) -> str:
    return (LFS / name).read_text()


# file, inodes, human, [(fsname, mount point, MDT rows, OST rows, summary total)]
TABLES = [
    ("df_exacloud_24ost.txt", False, False, [("exacloud", "/mnt/exacloud", 1, 24, 12706795008)]),
    (
        "df_i_three_fs.txt",
        True,
        False,
        [
            ("tfs1", "/mnt/lustre0/tfs1", 3, 3, 1965594),
            ("tfs2", "/mnt/lustre1/tfs2", 2, 3, 1965508),
            ("tfs3", "/mnt/lustre2/tfs3", 2, 2, 1310513),
        ],
    ),
    ("df_old_summary_with_space.txt", False, False, [("lustre", "/lustre", 1, 4, 31230490000)]),
    ("df_i_old_summary_with_space.txt", True, False, [("lustre", "/lustre", 1, 4, 18388640)]),
    ("df_h_users.txt", False, True, [("users", "/users", 1, 2, 5.2 * 1024**3)]),
]


@pytest.mark.parametrize(("name", "inodes", "human", "tables"), TABLES)
def test_tables(name: str, inodes: bool, human: bool, tables: list[tuple]) -> None:
    r = parse_lfs_df(read(name))
    assert (r.unknown, r.findings, r.inodes, r.human) == ([], [], inodes, human)
    got = [
        (
            fs.fsname,
            fs.mount_point,
            sum(row.kind == "MDT" for row in fs.rows),
            sum(row.kind == "OST" for row in fs.rows),
            fs.summary.total,
        )
        for fs in r.filesystems
    ]
    assert got == tables


def test_row_numbers_and_hex_index() -> None:
    fs = parse_lfs_df(read("df_exacloud_24ost.txt")).filesystem("exacloud")
    row = next(r for r in fs.rows if r.uuid == "exacloud-OST000a_UUID")
    assert (row.index, row.total, row.used, row.available, row.use_pct) == (10, 529449792, 1268, 524063432, 1)


def test_error_rows_and_state_letters_are_facts() -> None:
    fs = parse_lfs_df(read("df_v_inactive_error_degraded_derived.txt")).filesystem("exacloud")
    odd = [(r.kind, r.index, r.error, r.state) for r in fs.rows if r.error or r.state]
    assert odd == [("OST", 2, "", "D"), ("OST", 5, "inactive device", ""), ("OST", 9, "Input/output error", "")]


MALFORMED = [
    ("empty", ""),
    ("truncated", read("df_truncated_derived.txt")),
    ("not lfs", "lfs df: cannot open '/mnt/lfs1': No such file or directory (2)\n"),
    ("header only", read("df_exacloud_24ost.txt").splitlines()[0] + "\n"),
    ("bad number", read("df_exacloud_24ost.txt").replace("529449792        1256", "529449792        12x6", 1)),
]


@pytest.mark.parametrize(("case", "raw"), MALFORMED, ids=[c for c, _ in MALFORMED])
def test_unreadable_output_is_unknown_never_pass(case: str, raw: str) -> None:
    findings = df_findings(parse_lfs_df(raw), ["exacloud"])
    assert findings and max(f.status for f in findings) >= Status.UNKNOWN
    assert all(f.action in (Action.RETEST, Action.NONE, Action.CHECK_LINK) for f in findings)


FINDINGS = [  # fixture, mounted, expected (code, status, subject)
    ("df_exacloud_24ost.txt", ["exacloud"], []),
    ("df_i_three_fs.txt", ["tfs1", "tfs2", "tfs3"], []),
    (
        "df_v_inactive_error_degraded_derived.txt",
        ["exacloud"],
        [
            ("LUSTRE_TARGET_DEGRADED", Status.WARN, "exacloud-OST0002"),
            ("LUSTRE_TARGET_DEACTIVATED", Status.WARN, "exacloud-OST0005"),
            ("LUSTRE_TARGET_UNREACHABLE", Status.FAIL, "exacloud-OST0009"),
        ],
    ),
    ("df_exacloud_24ost.txt", ["exacloud", "lfs2"], [("LUSTRE_DF_MISSING", Status.UNKNOWN, "lfs2")]),
]


@pytest.mark.parametrize(("name", "mounted", "want"), FINDINGS)
def test_target_findings(name: str, mounted: list[str], want: list[tuple]) -> None:
    assert [(f.code, f.status, f.subject) for f in df_findings(parse_lfs_df(read(name)), mounted)] == want


def test_a_nearly_full_target_warns() -> None:
    raw = read("df_i_old_summary_with_space.txt").replace("2941300    12316556  19%", "14800000      457856  98%")
    assert [(f.code, f.subject) for f in df_findings(parse_lfs_df(raw))] == [("LUSTRE_TARGET_FULL", "lustre-OST0002")]


# --- the client evaluation with the optional lfs_df probe ---------------------------------------------------------


def as_lfs1(name: str) -> str:
    """A recorded table renamed to the evaluation's file system lfs1 at /mnt/lfs1 (derived at test time)."""
    return read(name).replace("exacloud", "lfs1")


def test_commands_run_lfs_df_verbose_only_when_asked() -> None:
    assert commands(["10.20.0.1@o2ib"], df=True)["lfs_df"] == ["lfs", "df", "-v"]
    assert "lfs_df" not in commands(["10.20.0.1@o2ib"])


@pytest.mark.parametrize(
    ("df", "want"),
    [
        (out(as_lfs1("df_exacloud_24ost.txt")), (Status.PASS, [])),
        (
            out(as_lfs1("df_v_inactive_error_degraded_derived.txt")),
            (Status.FAIL, ["LUSTRE_TARGET_DEACTIVATED", "LUSTRE_TARGET_DEGRADED", "LUSTRE_TARGET_UNREACHABLE"]),
        ),
        (out(as_lfs1("df_truncated_derived.txt")), (Status.UNKNOWN, ["PARSE_UNREADABLE"])),
        (
            out("", "lfs df: cannot open '/mnt/lfs1': Input/output error (5)\n", rc=5),
            (Status.UNKNOWN, ["PARSE_UNREADABLE"]),
        ),
        (out(timed_out=True, rc=None), (Status.UNKNOWN, ["PROBE_TIMEOUT"])),
    ],
)
def test_evaluation_judges_lfs_df(df: dict, want: tuple) -> None:
    outputs = {**healthy_outputs(), "lfs_df": df}
    v = client_verdict("gpu-node-01", evaluate(outputs, expected_filesystems(CLIENT_JSON_FS), proc_mounts=MOUNTS))
    assert (v.status, v.codes) == want
