"""squeue -h -o '%i %u %N' and Slurm hostlist expansion."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwaac.health.parsers.slurm_squeue import expand_hostlist, parse_squeue

FIXTURE = Path(__file__).parents[1] / "fixtures" / "slurm" / "squeue" / "squeue_i_u_N_derived.txt"

HOSTLISTS = [
    ("node[001-004,007]", ["node001", "node002", "node003", "node004", "node007"]),
    ("a[8-10]", ["a8", "a9", "a10"]),
    ("a[08-10]", ["a08", "a09", "a10"]),
    ("x1,y[2-3]", ["x1", "y2", "y3"]),
    ("rack[1-2]-n[01-02]", ["rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"]),
    ("plain", ["plain"]),
    ("", []),
    ("node[1-", None),
    ("node[3-1]", None),
    ("node[a-b]", None),
    ("node[[1]]", None),
    ("a,,b", None),
    ("n[1-999999999]", None),
]


@pytest.mark.parametrize(("expr", "hosts"), HOSTLISTS, ids=[h[0] or "empty" for h in HOSTLISTS])
def test_expand_hostlist(expr: str, hosts: list[str] | None) -> None:
    assert expand_hostlist(expr) == hosts


def test_fixture() -> None:
    sq = parse_squeue(FIXTURE.read_text())
    jobs = {j.job_id: j for j in sq.jobs}
    assert sq.unknown == []
    assert jobs["4101"].user == "alice"
    assert jobs["4101"].nodes == ("gpu-su01-h01", "gpu-su01-h02", "gpu-su01-h03", "gpu-su01-h04", "gpu-su01-h07")
    assert jobs["4102"].nodes == ("gpu-su01-h05", "gpu-su01-h06", "gpu-su02-h01", "gpu-su02-h02")
    assert jobs["4103_2"].nodes == ("gpu-su02-h10",)
    assert len(jobs["4104+0"].nodes) == 4
    assert jobs["4105"].nodes == () and jobs["4106"].nodes == ()
    assert [j.job_id for j in sq.jobs_on(frozenset({"gpu-su02-h01"}))] == ["4102"]


@pytest.mark.parametrize("raw", ["", "JOBID USER NODELIST\n", "garbage\n", "abc user n1\n", "1 u node[1-\n", b"x"])
def test_bad_input_never_raises_and_invents_no_nodes(raw: str) -> None:
    sq = parse_squeue(raw)  # type: ignore[arg-type]
    assert all(j.nodes == () for j in sq.jobs)
    if raw.strip() and not (isinstance(raw, str) and raw.startswith("JOBID")):
        assert sq.unknown
