"""Tables as SONiC's show commands print them: python-tabulate's ``simple`` format, a header line, a line of dashes
with one run per column, then rows whose cells sit inside the dash runs (``docs/telemetry/sonic-ports.md``).

The dash runs give each column's span, so cells with spaces (``2000.00 MB/s``, ``QSFP28 or later``) and empty
cells read right. A row that does not fit the spans (hand-edited or re-flowed pastes) is split on runs of two or
more spaces, then on single spaces with rate units joined back; if neither gives one cell per column the row is
not read and the caller names it. :func:`rows` is the row loop of the one-table readers (portstat, intfutil,
flap, lldpshow); :func:`read_tables` reads every table of a multi-table output (pfcstat's Rx and Tx tables,
queuestat's table per port, pfcwd) into :class:`Table` values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter

_RUNS = re.compile(r"-+")
_WIDE_GAP = re.compile(r"\s{2,}")
# Tokens that belong to the token before them when a paste collapsed the spacing: portstat's byte rates
# (utilities_common/netstat.py format_brate) and the accuracy of a predicted FLR (format_fec_flr_predicted).
_UNITS = frozenset({"B/s", "KB/s", "MB/s", "GB/s"})
_CACHED = "Last cached time was"  # printed above a table whose counts are since a clear (pfcstat, queuestat)


@dataclass(frozen=True, slots=True)
class Layout:
    """The columns of one printed table.

    Attributes:
        names: the header words of each column, as printed (``RX_OK``, ``FLR(P) (Accuracy)``, ``Asym PFC``).
        header_at: the index of the header line.
        rows_from: the index of the first line after the dash line.
        aligned: whether the header sat inside the dash runs (False: a paste that lost its spacing).
        width: where the last dash run ends.
        right_aligned: whether every row ends at ``width`` (sonic-utilities prints portstat and intfutil tables
            with ``stralign='right'``): a shorter last row was cut and is not read, so a cut number is never read
            (rows above it may be hand-edited shorter: they are read).
    """

    names: tuple[str, ...]
    header_at: int
    rows_from: int
    aligned: bool
    width: int
    right_aligned: bool
    _cells: Callable[[str], tuple[str, ...]]
    _gaps: Callable[[str], tuple[str, ...]]
    _spans: tuple[tuple[int, int], ...] = ()

    def plain_rows(self, lines: list[str]) -> list[tuple[str, ...]] | None:
        """The cells of every line after the dash line, when each is a row :func:`rows` reads without a word: no
        blank, rule, second-table, prompt or elided line, every cell inside its span, and (right-aligned) the last
        line reaching the right edge; None otherwise, and :func:`rows` reads the table with its reasons."""
        body = lines[self.rows_from :]
        if not self.aligned or not body or self.short(body[-1]):
            return None
        first, cells, gaps = self.names[0], self._cells, self._gaps
        out = []
        for line in body:
            text = line.strip()
            if not text or text.startswith(first) or "@" in text or text[0] in ".-":
                return None
            gap = "".join(gaps(line))
            if gap and not gap.isspace():
                return None
            out.append(cells(line))
        return out

    def plain_columns(self, lines: list[str], wanted: Sequence[int]) -> list[list[str]] | None:
        """The stripped cells of columns ``wanted`` (indices), a list per column, when :meth:`plain_rows` would read
        the table and every line after the dash line is as long as the first (a printed table's rows are): checked
        a character column at a time over all rows, and only the wanted cells cut. None otherwise (then
        :meth:`plain_rows`, or :func:`rows` with its reasons)."""
        body = lines[self.rows_from :]
        if not self.aligned or not body or self.short(body[-1]):
            return None
        width = len(body[0])
        if width < self.width or set(map(len, body)) != {width}:
            return None
        big = "".join(body)
        if "@" in big:
            return None
        spans = self._spans
        edges = [0, *(pos for span in spans for pos in span), width]
        gaps = "".join(big[c::width] for k in range(0, len(edges), 2) for c in range(edges[k], edges[k + 1]))
        if gaps and not gaps.isspace():
            return None
        cut = list(dict.fromkeys([0, *wanted]))  # each column once, the first column first
        getter = itemgetter(*(slice(*spans[j]) for j in cut)) if len(cut) > 1 else None
        words = " ".join(map(" ".join, map(getter, body))).split() if getter else []
        if len(words) == len(cut) * len(body):  # one word a cell (the usual): cut in one pass
            by = {j: words[k :: len(cut)] for k, j in enumerate(cut)}
        else:  # an empty cell, or cells of several words
            by = {j: list(map(str.strip, map(itemgetter(slice(*spans[j])), body))) for j in cut}
        first = by[0]
        starts = "\n" + "\n".join(first)
        if "" in first or self.names[0] in starts or "\n." in starts or "\n-" in starts:
            return None  # a blank line, a second header, an elided or rule line
        return [by[j] for j in wanted]

    def short(self, line: str) -> bool:
        """Whether ``line`` ends before the right edge of a right-aligned table (as a cut line does)."""
        return self.right_aligned and self.aligned and len(line.rstrip()) < self.width

    def cells(self, line: str, *, last: bool = False) -> Sequence[str] | None:
        """The cells of ``line``, one per column (those cut from the spans keep their padding: strip what you
        keep), or None when the line does not split into them. ``last``: the output's last line, which a cut
        output ends in; in a right-aligned table it must reach the last column's end."""
        if last and self.short(line):
            return None
        if self.aligned:
            gaps = "".join(self._gaps(line))
            if not gaps or gaps.isspace():
                return self._cells(line)
        parts = _WIDE_GAP.split(line.strip())
        if len(parts) == len(self.names):
            return parts
        tokens: list[str] = []
        for token in line.split():
            if tokens and (token in _UNITS or token[0] == "("):
                tokens[-1] = f"{tokens[-1]} {token}"
            else:
                tokens.append(token)
        return tokens if len(tokens) == len(self.names) else None


def _getters(spans: list[tuple[int, int]]) -> tuple[Callable[[str], tuple[str, ...]], Callable[[str], tuple]]:
    # one C call cuts every cell (and every gap) of a line; with two or more keys itemgetter returns a tuple
    cuts = [slice(start, end) for start, end in spans]
    edges = [0, *(pos for span in spans for pos in span), None]
    gaps = [slice(edges[i], edges[i + 1]) for i in range(0, len(edges), 2)]
    return itemgetter(*cuts), itemgetter(*gaps)


def last_line(lines: list[str], start: int) -> int:
    """The index of the last non-blank line at or after ``start`` (-1 when none)."""
    for i in range(len(lines) - 1, start - 1, -1):
        if lines[i].strip():
            return i
    return -1


def find_layout(
    lines: list[str], start: int = 0, *, min_columns: int = 2, right_aligned: bool = False
) -> Layout | None:
    """The first table at or after ``lines[start]``: a dash line of ``min_columns`` or more runs, with the header on
    the nearest non-blank line above it (``right_aligned``: see :class:`Layout`). None when there is no such
    table."""
    min_columns = max(min_columns, 2)
    for i in range(max(start, 1), len(lines)):
        dashes = lines[i].rstrip()
        if not dashes or dashes.lstrip(" -") or "--" not in dashes:
            continue
        spans = [m.span() for m in _RUNS.finditer(dashes)]
        if len(spans) < min_columns:
            continue
        h = i - 1
        while h >= start and not lines[h].strip():
            h -= 1
        if h < start:
            continue
        header = lines[h]
        cuts, gaps = _getters(spans)
        names = tuple(c.strip() for c in cuts(header))
        aligned = all(names) and not "".join(gaps(header)).strip()
        if not aligned:
            words = tuple(_WIDE_GAP.split(header.strip()))
            if len(words) != len(spans):
                words = tuple(header.split())
            if len(words) != len(spans):
                continue
            names = words
        return Layout(names, h, i + 1, aligned, spans[-1][1], right_aligned, cuts, gaps, tuple(spans))
    return None


def is_rule(line: str) -> bool:
    """Whether ``line`` is a tabulate rule: two or more runs of dashes and nothing else."""
    stripped = line.strip()
    return stripped.startswith("-") and " -" in stripped and not stripped.strip("- ")


def _is_prompt(stripped: str) -> bool:
    """A shell prompt pasted after a table (``admin@sonic:~$ show ...``, ``root@sw:/home/admin# ...``)."""
    head = stripped.split(None, 1)[0]
    return head.endswith(("$", "#")) or "$ " in stripped or "# " in stripped


def _elided(stripped: str) -> bool:
    """A line of dots that a person put in place of rows (``...``)."""
    return bool(stripped) and not stripped.strip(".")


def rows(
    lines: list[str],
    layout: Layout,
    unknown: list[str],
    *,
    skip: tuple[str, ...] = (),
    until: tuple[str, ...] = (),
    stops: list[int] | None = None,
    starts: tuple[str, ...] = (),
    rules_end: bool = True,
) -> Iterator[tuple[int, Sequence[str]]]:
    """The rows of the one table of ``layout`` in ``lines``, as (line index, cells as :meth:`Layout.cells` cuts
    them); lines that are not rows are named in ``unknown`` and not yielded.

    Blank lines and lines starting with one of ``skip`` are passed over. A line starting with one of ``until``
    (a trailer) ends the rows; its index is appended to ``stops``. A shell prompt pasted after the output ends
    them. A line starting with the first column's name or one of ``starts``, or a dash line (unless ``rules_end``
    is False: then it is passed over), starts a second table: it is named and ends the rows. A ``...`` line is
    named as elided. In a right-aligned table the output's last line must reach the right edge (a cut output ends
    in a cut row)."""
    first = (layout.names[0], *starts)
    end = last_line(lines, layout.rows_from)
    for n in range(layout.rows_from, len(lines)):
        line = lines[n]
        text = line.strip()
        if not text or (skip and text.startswith(skip)):
            continue
        if until and text.startswith(until):
            if stops is not None:
                stops.append(n)
            return
        rule = not text.strip("- ")
        if rule and not rules_end:
            continue
        if rule or text.startswith(first):
            unknown.append(f"line {n + 1}: a second table starts; only the first is read")
            return
        if "@" in text and _is_prompt(text):
            return
        if text[0] == "." and _elided(text):
            unknown.append(f"line {n + 1}: {text!r} in place of rows (output elided)")
            continue
        cells = layout.cells(line, last=n == end)
        if cells is None:
            if n == end and layout.short(line):
                unknown.append(f"line {n + 1}: the last row ends before the table's right edge (output cut?): {text!r}")
            else:
                unknown.append(f"line {n + 1}: cells do not line up with the {len(layout.names)} columns: {text!r}")
            continue
        yield n, cells


@dataclass(slots=True)
class Table:
    """One table of a multi-table output: ``header`` names, ``line`` (the header's line number), ``rows`` as (line
    number, stripped cells), ``problems`` naming lines that are not rows of it (a row cut short, an elided
    ``...``), ``cleared_at``: the time of ``Last cached time was <time>`` above the header (counts since a clear).
    """

    header: list[str]
    line: int
    rows: list[tuple[int, list[str]]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    cleared_at: str = ""


def _full(layout: Layout, line: str, *, last: bool = False) -> list[str] | None:
    """The stripped cells of ``line`` when it has one non-empty cell per column, else None."""
    cells = layout.cells(line, last=last)
    if cells is None:
        return None
    stripped = [cell.strip() for cell in cells]
    return stripped if all(stripped) else None


def _read_rows(lines: list[str], layout: Layout, table: Table, gapped: bool, end: int) -> int:
    """Read the rows of ``table`` into it; the index of the first line after them."""
    n = len(lines)
    groups = len(layout.names)
    i = layout.rows_from
    while i < n:
        line = lines[i]
        text = line.strip()
        if not text:
            if not gapped:
                break
            ahead = i + 1
            while ahead < n and not lines[ahead].strip():
                ahead += 1
            following = lines[ahead].strip() if ahead < n else ""
            if (
                not following
                or _is_prompt(following)
                or (ahead + 1 < n and is_rule(lines[ahead + 1]))
                or _full(layout, lines[ahead]) is None
            ):
                break
            i = ahead
            continue
        if (i + 1 < n and is_rule(lines[i + 1])) or ("@" in text and _is_prompt(text)):
            break  # the header of the next table, or a prompt pasted after the output
        cells = _full(layout, line, last=i == end)
        if cells is not None:
            table.rows.append((i + 1, cells))
        else:
            count = len(text.split(None, groups - 1))
            if count == groups and i == end and layout.short(line):
                table.problems.append(f"line {i + 1}: {text[:80]!r} ends before the table's right edge (cut short)")
            else:
                table.problems.append(
                    f"line {i + 1}: {text[:80]!r} has {count} of {groups} columns (cut short or elided)"
                )
        i += 1
    return i


def read_tables(raw: str, gapped: tuple[tuple[str, str], ...] = ()) -> tuple[list[Table], list[str]]:
    """Every table in ``raw``, in order, and problems found outside tables (a ``...`` line in place of rows).

    Tables are right aligned (pfcstat, pfcwd and queuestat print with ``stralign='right'``). Lines outside tables
    ("Last cached time was ...", "For namespace :", prompts) are not reported; a line inside a table that is not
    a row is a problem of that table. A table ends at a blank line, a prompt or the header of the next table;
    one whose first two column names are in ``gapped`` goes on across blank lines while the next line is a row of
    it (pfcstat --history leaves one between ports)."""
    lines = raw.splitlines()
    tables: list[Table] = []
    stray: list[str] = []
    end = last_line(lines, 0)
    i, n = 0, len(lines)
    while i < n:
        rule = next((k for k in range(max(i, 1), n) if is_rule(lines[k])), n)
        for k in range(i, rule):
            stripped = lines[k].strip()
            if _elided(stripped):
                stray.append(f"line {k + 1}: {stripped!r} in place of rows (output elided)")
        if rule == n:
            break
        layout = find_layout(lines, rule - 1, right_aligned=True)
        if layout is None or layout.rows_from != rule + 1:
            header = _WIDE_GAP.split(lines[rule - 1].strip())
            table = Table(header, rule)
            table.problems.append(
                f"line {rule}: header {lines[rule - 1].strip()[:80]!r} names {len(header)} "
                f"columns, the rule below it has {len(lines[rule].split())}"
            )
            tables.append(table)
            i = rule + 1
            continue
        table = Table(list(layout.names), layout.header_at + 1)
        tables.append(table)
        for above in lines[max(0, layout.header_at - 3) : layout.header_at]:
            if _CACHED in above:  # pfcstat prints it right above, queuestat above "For namespace"
                table.cleared_at = above.rpartition(" was ")[2].strip()
        i = _read_rows(lines, layout, table, tuple(layout.names[:2]) in gapped, end)
    return tables, stray


def to_int(cell: str) -> int | None:
    """A printed count (``1,200``, ``0``) as an int; None for anything else (``N/A``, a cut number)."""
    digits = cell.replace(",", "")
    return int(digits) if digits.isdigit() else None


__all__ = ["Layout", "Table", "find_layout", "is_rule", "last_line", "read_tables", "rows", "to_int"]
