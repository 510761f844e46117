"""A samples folder's file read as text: what Python's text layer gives (UTF-8 with replacement, universal
newlines), byte for byte, for every newline and encoding a pasted or transferred output may hold."""

from __future__ import annotations

from pathlib import Path

import pytest

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
