"""``squeue -h -o '%i %u %N'`` (job id, user, node list) as jobs with their nodes, and Slurm hostlist expansion.

The node list is Slurm's ranged hostlist (``src/common/hostlist.c`` ``hostlist_ranged_string``):
``gpu-su01-h[01-04,07],gpu-su02-h01``; numbers keep their zero padding, several bracket groups in one name
(``rack[1-2]-n[01-02]``) expand as their product. Pending jobs print no node (or ``(null)``) and hold none.
Never raises: a line or a node list it cannot read is a reason in ``unknown``, naming the line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_HOSTS = 1_000_000  # a hostlist expanding past this is refused (a typo such as [1-999999999])


@dataclass(frozen=True, slots=True)
class Job:
    """One job: its id as printed (``1234``, ``1234_7`` for an array task, ``1234+0`` for a het component), user,
    and its nodes expanded."""

    job_id: str
    user: str
    nodes: tuple[str, ...]


@dataclass(slots=True)
class Squeue:
    """The jobs of one ``squeue`` output, and what could not be read."""

    jobs: list[Job] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    def jobs_on(self, nodes: set[str] | frozenset[str]) -> list[Job]:
        """The jobs holding any of ``nodes``, in output order."""
        return [j for j in self.jobs if not nodes.isdisjoint(j.nodes)]


def _split_top(expr: str) -> list[str] | None:
    """``expr`` split at the commas outside brackets; None when brackets do not pair."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(expr):
        if ch == "[":
            depth += 1
            if depth > 1:
                return None
        elif ch == "]":
            depth -= 1
            if depth < 0:
                return None
        elif ch == "," and depth == 0:
            out.append(expr[start:i])
            start = i + 1
    if depth:
        return None
    out.append(expr[start:])
    return out


def _range(body: str) -> list[str] | None:
    """The numbers of one bracket body (``01-04,07``) as printed strings, zero padding kept; None if malformed."""
    out: list[str] = []
    for part in body.split(","):
        lo, dash, hi = part.partition("-")
        if not lo.isdigit() or (dash and not hi.isdigit()):
            return None
        if not dash:
            out.append(lo)
            continue
        a, b = int(lo), int(hi)
        if b < a or len(out) + b - a >= MAX_HOSTS:
            return None
        width = len(lo) if lo.startswith("0") or len(lo) == len(hi) else 0
        out.extend(str(n).zfill(width) for n in range(a, b + 1))
    return out


def expand_hostlist(expr: str) -> list[str] | None:
    """The host names of a Slurm hostlist (``node[001-004,007],login1``), in order; None when it is malformed."""
    expr = expr.strip()
    if not expr:
        return []
    items = _split_top(expr)
    if items is None:
        return None
    hosts: list[str] = []
    for item in items:
        if not item:
            return None
        names = [""]
        rest = item
        while rest:
            head, bra, tail = rest.partition("[")
            if not bra:
                names = [n + head for n in names]
                break
            body, ket, rest = tail.partition("]")
            values = _range(body) if ket else None
            if values is None or len(names) * len(values) > MAX_HOSTS:
                return None
            names = [n + head + v for n in names for v in values]
        hosts.extend(names)
        if len(hosts) > MAX_HOSTS:
            return None
    return hosts


def parse_squeue(raw: str, *, version: str | None = None) -> Squeue:
    """Read ``squeue -h -o '%i %u %N'``: the first word is the job id, the second the user, the last (when there
    are three or more words) the node list; words between (``%T``...) are ignored. A header line (``JOBID``),
    an empty or ``(null)`` node list, and blank lines hold no nodes. ``version`` is accepted for symmetry."""
    out = Squeue()
    if not isinstance(raw, str):
        out.unknown.append(f"input is {type(raw).__name__}, not text")
        return out
    for n, line in enumerate(raw.splitlines(), 1):
        words = line.split()
        if not words or (n == 1 and words[0] in ("JOBID", "JOB_ID")):
            continue
        if len(words) < 2:
            out.unknown.append(f"line {n}: {line.strip()!r} is not 'JOBID USER NODELIST'")
            continue
        job, user = words[0], words[1]
        if not job[:1].isdigit():
            out.unknown.append(f"line {n}: job id {job!r} does not start with a digit")
            continue
        nodelist = words[-1] if len(words) >= 3 else ""
        if nodelist in ("(null)", "n/a") or nodelist.startswith("("):  # a pending job's (Reason) from %R
            nodelist = ""
        hosts = expand_hostlist(nodelist)
        if hosts is None:
            out.unknown.append(f"line {n}: node list {nodelist!r} of job {job} is not a Slurm hostlist")
            hosts = []
        out.jobs.append(Job(job, user, tuple(hosts)))
    return out


__all__ = ["Job", "Squeue", "expand_hostlist", "parse_squeue"]
