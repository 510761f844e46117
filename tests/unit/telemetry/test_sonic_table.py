"""The shared reader of SONiC's tabulate ``simple`` tables (``sonic_table``): the row loop of the one-table readers
(``rows``) and the multi-table reader (``read_tables``), on small tables written here in the printed layout."""

from __future__ import annotations

from typing import Any

import pytest

from hwaac.telemetry.parsers.sonic_table import find_layout, read_tables, rows

# a right-aligned table as portstat prints it (stralign='right'): cells with spaces sit inside the dash runs


def row(port: str, rate: str, count: str) -> str:
    """One row of RATES as tabulate pads it: each cell right-aligned in its column, two spaces between."""
    return f"{port:>9}  {rate:>16}  {count:>7}\n"


RATES = (
    "    IFACE            RX_BPS    RX_OK\n---------  ----------------  -------\n"
    + row("Ethernet0", "2000.00 MB/s", "1,200")
    + row("Ethernet4", "0.00 B/s", "7")
)
LAST = row("Ethernet8", "1.00 B/s", "123")


def read_rows(raw: str, **kwargs: Any) -> tuple[list[tuple[int, list[str]]], list[str]]:
    lines = raw.splitlines()
    layout = find_layout(lines, right_aligned=True)
    assert layout is not None
    unknown: list[str] = []
    got = [(n + 1, [c.strip() for c in cells]) for n, cells in rows(lines, layout, unknown, **kwargs)]
    return got, unknown


# (case, text after the table, the reason that must be in unknown, rows read)
ROW_CASES = [
    ("complete", "", "", 2),
    ("second table", "    IFACE            RX_BPS    RX_OK\n", "line 5: a second table starts", 2),
    ("rule line", "---------  ----------------  -------\n", "line 5: a second table starts", 2),
    ("cut last row", LAST[:-2] + "\n", "line 5: the last row ends before", 2),
    ("elided", "...\n" + LAST, "line 5: '...' in place of rows", 3),
    ("misaligned", "Ethernet8 1.00 B/s\n" + LAST, "line 5: cells do not line up with the 3 columns", 3),
]


@pytest.mark.parametrize(("case", "tail", "reason", "count"), ROW_CASES, ids=[c[0] for c in ROW_CASES])
def test_rows_name_what_is_not_a_row(case: str, tail: str, reason: str, count: int) -> None:
    got, unknown = read_rows(RATES + tail)
    assert len(got) == count
    if reason:
        assert any(u.startswith(reason) for u in unknown), unknown
    else:
        assert unknown == []


def test_rows_cut_cells_along_the_dash_runs() -> None:
    got, _ = read_rows(RATES)
    assert got == [(3, ["Ethernet0", "2000.00 MB/s", "1,200"]), (4, ["Ethernet4", "0.00 B/s", "7"])]


def test_a_prompt_ends_the_rows_quietly() -> None:
    got, unknown = read_rows(RATES + "admin@sonic:~$ show interfaces status\n")
    assert len(got) == 2 and unknown == []


def test_a_trailer_ends_the_rows_and_is_handed_back() -> None:
    stops: list[int] = []
    got, unknown = read_rows(RATES + "Total entries displayed:  2\n" + LAST, until=("Total entries",), stops=stops)
    assert len(got) == 2 and unknown == [] and stops == [4]


def test_skipped_lines_are_not_rows() -> None:
    got, unknown = read_rows(RATES + "Reminder: Please execute 'show interface counters -d all'\n", skip=("Reminder:",))
    assert len(got) == 2 and unknown == []


PFC = """\
Last cached time was 2020-10-01 13:15:55.420247
  Port Rx    PFC0    PFC1
---------  ------  ------
Ethernet0   1,200       0
Ethernet4       0     N/A
  Port Tx    PFC0    PFC1
---------  ------  ------
Ethernet0      11      12
"""


def test_adjacent_tables_are_two_tables() -> None:
    tables, stray = read_tables(PFC)
    assert [t.header for t in tables] == [["Port Rx", "PFC0", "PFC1"], ["Port Tx", "PFC0", "PFC1"]]
    assert [t.line for t in tables] == [2, 6]
    assert tables[0].rows == [(4, ["Ethernet0", "1,200", "0"]), (5, ["Ethernet4", "0", "N/A"])]
    assert tables[1].rows == [(8, ["Ethernet0", "11", "12"])]
    assert [t.problems for t in tables] == [[], []] and stray == []


def test_the_clear_time_belongs_to_the_table_below_it() -> None:
    tables, _ = read_tables(PFC)
    assert [t.cleared_at for t in tables] == ["2020-10-01 13:15:55.420247", ""]


def test_a_last_row_cut_mid_number_is_not_read() -> None:
    # "Ethernet0      11      12" cut after "1": every column has a cell, but the row ends short of the edge
    tables, _ = read_tables(PFC[:-2] + "\n")
    assert tables[1].rows == []
    assert tables[1].problems == ["line 8: 'Ethernet0      11      1' ends before the table's right edge (cut short)"]


HISTORY = """\
     Port    Priority    Recent RX Pause Timestamp
---------  ----------  ---------------------------
Ethernet0        PFC0         01/10/2008, 21:20:00

Ethernet4        PFC0         05/13/2014, 16:53:20

admin@sonic:~$
...
"""


def test_gapped_tables_go_on_across_blank_lines_and_keep_cells_with_spaces() -> None:
    tables, stray = read_tables(HISTORY, gapped=(("Port", "Priority"),))
    assert [cells for _, cells in tables[0].rows] == [
        ["Ethernet0", "PFC0", "01/10/2008, 21:20:00"],
        ["Ethernet4", "PFC0", "05/13/2014, 16:53:20"],
    ]
    assert stray == ["line 8: '...' in place of rows (output elided)"]


def test_without_gaps_a_blank_line_ends_the_table() -> None:
    tables, _ = read_tables(HISTORY)
    assert len(tables[0].rows) == 1


def test_a_header_that_does_not_fit_its_rule_is_a_problem() -> None:
    tables, _ = read_tables("Port Rx PFC0\n---------  ------\nEthernet0       1\n")
    assert tables[0].problems == ["line 1: header 'Port Rx PFC0' names 1 columns, the rule below it has 2"]
    assert tables[0].rows == []
