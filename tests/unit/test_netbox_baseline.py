"""hwaac.devnetbox.baseline: the shipped NetBox baseline and the file it is kept in (its restore and completeness
are tested against the real NetBox in tests/integration/test_netbox_local.py)."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from hwaac.devnetbox import baseline
from hwaac.devnetbox.local import VERSION

DUMP = (
    b"--\n-- PostgreSQL database dump\n--\n\n\\restrict AbC123\n\nSET client_encoding = 'UTF8';\n"
    b"COPY public.t (id) FROM stdin;\n1\n\\.\n\n\\unrestrict AbC123\n\n"
)


def test_from_dump_puts_the_header_first_and_drops_the_restrict_guard() -> None:
    sql = baseline.from_dump(DUMP, "9.9.9")
    assert sql.startswith(b"-- hwaac: NetBox 9.9.9's schema")
    assert b"\\restrict" not in sql and b"\\unrestrict" not in sql
    assert b"COPY public.t (id) FROM stdin;\n1\n\\.\n" in sql and b"SET client_encoding = 'UTF8';\n" in sql


def test_write_is_atomic_and_the_same_sql_gives_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(baseline, "FOLDER", tmp_path / "baselines")
    sql = baseline.from_dump(DUMP, "9.9.9")
    baseline.write(baseline.path("9.9.9"), sql)
    first = baseline.path("9.9.9").read_bytes()
    baseline.write(baseline.path("9.9.9"), sql)
    assert baseline.path("9.9.9").read_bytes() == first
    assert [p.name for p in (tmp_path / "baselines").iterdir()] == ["netbox-9.9.9.sql.gz"]  # no temporary left
    assert baseline.read("9.9.9") == sql


@pytest.mark.parametrize(
    "content", [None, b"not gzip", gzip.compress(b"x")[:-6]], ids=["missing", "not-gzip", "cut-off"]
)
def test_no_usable_baseline_reads_as_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes | None
) -> None:
    monkeypatch.setattr(baseline, "FOLDER", tmp_path)
    if content is not None:
        baseline.path("9.9.9").write_bytes(content)
    assert baseline.read("9.9.9") is None


def test_the_shipped_baseline_is_this_versions_and_holds_no_user_token_or_session() -> None:
    sql = baseline.read(VERSION)
    assert sql is not None, f"no baseline for NetBox {VERSION}: python -m hwaac.devnetbox.baseline makes it"
    text = sql.decode()
    assert text.startswith(f"-- hwaac: NetBox {VERSION}'s schema")
    rows = {m[1]: m[2] for m in re.finditer(r"^COPY (\S+) \([^)]*\) FROM stdin;\n(.*?)^\\\.$", text, re.M | re.S)}
    assert rows["public.django_migrations"].count("\n") > 300  # the migrations ran
    for table in ("public.users_user", "public.users_token", "public.django_session", "public.dcim_device"):
        assert rows.get(table, "") == "", f"{table} has rows in the baseline"
    assert "\\restrict" not in text
