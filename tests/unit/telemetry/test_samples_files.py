"""A samples folder's file read as text: what Python's text layer gives (UTF-8 with replacement, universal
newlines), byte for byte, for every newline and encoding a pasted or transferred output may hold."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hwaac.telemetry import samples
from hwaac.telemetry.samples import read_text

CASES = [
    ("plain", b"NIC statistics:\n     rx_packets_phy: 12\n"),
    ("CRLF", b"NIC statistics:\r\n     rx_packets_phy: 12\r\n"),
    ("lone CR", b"a\rb\r"),
    ("CR then CRLF", b"a\r\r\nb"),
    ("CR at the end", b"a\r"),
    ("invalid UTF-8", b"rx_ok: 1\xff\xfe\n"),
    ("a BOM", b"\xef\xbb\xbf{\"a\": 1}\n"),
    ("non-ASCII", "Vlan — routed\n".encode()),
    ("a cut multibyte character", "é".encode()[:1]),
    ("empty", b""),
]


@pytest.mark.parametrize(("case", "data"), CASES, ids=[c[0] for c in CASES])
def test_read_text_is_the_text_layers_reading(tmp_path: Path, case: str, data: bytes) -> None:
    path = tmp_path / "out.txt"
    path.write_bytes(data)
    with open(path, encoding="utf-8", errors="replace") as fh:
        want = fh.read()
    assert read_text(str(path)) == want


@pytest.mark.parametrize("size", [0, 1, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, 3 << 20])
def test_read_text_reads_a_file_of_any_size_whole(tmp_path: Path, size: int) -> None:
    data = (b"0123456789\n" * (size // 11 + 1))[:size]
    path = tmp_path / "big.txt"
    path.write_bytes(data)
    assert read_text(str(path)) == data.decode()


@pytest.mark.parametrize(
    "name",
    [
        "a.txt",
        "a.b.txt",
        ".txt",
        "..txt",
        "noext",
        "a.",
        ".hidden.txt",
        "...",
        "x..json",
        "ethtool@rail0.txt",
        "counters-db.json",
    ],
)
def test_a_file_name_splits_as_splitext_splits_it(name: str) -> None:
    assert samples._split_suffix(name) == os.path.splitext(name)
