"""Tables as SONiC's show commands print them with ``tabulate(..., tablefmt='simple')``: a header line, a line of
dash groups, rows until a blank line. One reader shared by the pfcstat, pfcwd and queuestat readers.

Header names hold single spaces ("Port Rx", "TX OK/DROP") and are split on two or more; cells hold none, except
in the last column (pfcstat's "01/10/2008, 21:20:00"), so a row is ``line.split(None, columns - 1)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_GAP = re.compile(r"\s{2,}")


@dataclass(slots=True)
class Table:
    """One printed table: ``header`` names, ``rows`` as (line number, cells), ``problems`` naming lines that are
    not rows of it (a row cut short, an elided ``...``)."""

    header: list[str]
    line: int
    rows: list[tuple[int, list[str]]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    cleared_at: str = ""  # "Last cached time was <this>" above the header: the counts are since a clear



def _is_rule(stripped: str) -> bool:
    """A tabulate rule: two or more groups of dashes and nothing else."""
    return stripped.startswith("-") and not stripped.strip("- ") and " -" in stripped


def _is_prompt(stripped: str) -> bool:
    """A shell prompt pasted after a table (``admin@sonic:~$ show ...``, ``root@sw:/home/admin# ...``)."""
    head = stripped.split(None, 1)[0]
    return head.endswith(("$", "#")) or "$ " in stripped or "# " in stripped


def _elided(stripped: str) -> bool:
    """A line of dots that a person put in place of rows (``...``)."""
    return bool(stripped) and not stripped.strip(".")


def read_tables(raw: str, gapped: tuple[tuple[str, str], ...] = ()) -> tuple[list[Table], list[str]]:
    """Every table in ``raw``, in order, and problems found outside tables (a ``...`` line in place of rows).

    Lines outside tables ("Last cached time was ...", "For namespace :", prompts) are not reported; a line inside
    a table that is not a row is a problem of that table. A table whose first two column names are in ``gapped``
    goes on across blank lines while the next line is a row of it (pfcstat --history leaves one between ports)."""
    lines = raw.splitlines()
    tables: list[Table] = []
    stray: list[str] = []
    i, n = 0, len(lines)
    while i < n:
        stripped = lines[i].strip()
        if not _is_rule(stripped) or i == 0:
            if _elided(stripped):
                stray.append(f"line {i + 1}: {stripped!r} in place of rows (output elided)")
            i += 1
            continue
        groups = len(stripped.split())
        header = _GAP.split(lines[i - 1].strip())
        table = Table(header, i)  # the header's 1-based line number is i
        tables.append(table)
        for above in lines[max(0, i - 4) : i - 1]:  # pfcstat prints it right above, queuestat above "For namespace"
            if "Last cached time" in above:
                table.cleared_at = above.rpartition(" was ")[2].strip()
        if len(header) != groups:
            table.problems.append(f"line {i}: header {lines[i - 1].strip()[:80]!r} names {len(header)} columns, "
                                  f"the rule below it has {groups}")
        gaps = tuple(header[:2]) in gapped
        i += 1
        while i < n:
            text = lines[i].strip()
            if not text:
                if not gaps:
                    break
                ahead = i + 1
                while ahead < n and not lines[ahead].strip():
                    ahead += 1
                following = lines[ahead].strip() if ahead < n else ""
                if (not following or len(following.split(None, groups - 1)) != groups or _is_prompt(following)
                        or (ahead + 1 < n and _is_rule(lines[ahead + 1].strip()))):
                    break
                i = ahead
                continue
            if _is_rule(text):  # no blank line before the next table: its header was taken for a row or a problem
                if table.rows and table.rows[-1][0] == i:
                    table.rows.pop()
                elif table.problems and table.problems[-1].startswith(f"line {i}:"):
                    table.problems.pop()
                break
            cells = text.split(None, groups - 1)
            if "@" in cells[0] and _is_prompt(text):
                break
            if len(cells) == groups:
                table.rows.append((i + 1, cells))
            else:
                table.problems.append(f"line {i + 1}: {text[:80]!r} has {len(cells)} of {groups} columns "
                                      "(cut short or elided)")
            i += 1
    return tables, stray


def to_int(cell: str) -> int | None:
    """A printed count (``1,200``, ``0``) as an int; None for anything else (``N/A``, a cut number)."""
    digits = cell.replace(",", "")
    return int(digits) if digits.isdigit() else None


__all__ = ["Table", "read_tables", "to_int"]
