"""The migrated NetBox baseline: an empty database as NetBox's own ``netbox migrate`` leaves it, shipped as SQL.

``netbox migrate`` on an empty database takes 4-16 minutes on 2 cores (Django re-renders the model state after
each of NetBox 4.7's 336 migrations). ``hwaac netbox up`` instead restores ``baselines/netbox-<VERSION>.sql.gz``
(``pg_dump`` of such a database, made before any user, token or object exists) and then runs ``netbox migrate``,
which applies whatever the baseline lacks and otherwise does nothing. No baseline for the version, or one that
does not restore, means the full migration. ``python -m hwaac.devnetbox.baseline`` makes the file (README.md, "A
local NetBox").
"""

from __future__ import annotations

import argparse
import gzip
import io
import re
import sys
from pathlib import Path

from hwaac.fileio import write_atomic

FOLDER = Path(__file__).with_name("baselines")
HEADER = (
    "-- hwaac: NetBox {version}'s schema and data as `netbox migrate` leaves an empty database (no users, no "
    "tokens), dumped with pg_dump --no-owner --no-privileges.\n"
    "-- Made by `python -m hwaac.devnetbox.baseline`; restored by `hwaac netbox up` "
    "(hwaac.devnetbox.baseline).\n"
)
# pg_dump >= 15.14 guards a plain dump with \restrict KEY ... \unrestrict KEY; an older psql does not know them and
# they protect against a hostile server, not against our own file
_RESTRICT = re.compile(rb"^\\(?:un)?restrict [A-Za-z0-9]+\n", re.MULTILINE)


def path(version: str) -> Path:
    """Where the baseline of NetBox ``version`` lives (it may not exist)."""
    return FOLDER / f"netbox-{version}.sql.gz"


def read(version: str) -> bytes | None:
    """The baseline SQL of NetBox ``version``, or None when there is none (or it cannot be read)."""
    try:
        return gzip.decompress(path(version).read_bytes())
    except (OSError, EOFError, gzip.BadGzipFile):
        return None


def from_dump(dump: bytes, version: str) -> bytes:
    """The baseline SQL from ``pg_dump``'s output: our header first, the ``\\restrict`` guard lines dropped."""
    return HEADER.format(version=version).encode() + _RESTRICT.sub(b"", dump)


def write(target: Path, sql: bytes) -> None:
    """Write ``sql`` gzipped to ``target`` atomically; the same SQL gives the same bytes (no time stamp)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0, filename="") as out:
        out.write(sql)
    write_atomic(target, raw.getvalue(), mode=0o644)


def main(argv: list[str] | None = None) -> int:
    """Migrate a scratch database of the local NetBox from empty, dump it and write the baseline (or check it)."""
    from hwaac.devnetbox.local import VERSION, LocalNetBox
    from hwaac.errors import NetBoxError

    parser = argparse.ArgumentParser(prog="python -m hwaac.devnetbox.baseline", description=main.__doc__)
    parser.add_argument(
        "-o", "--output", type=Path, default=path(VERSION), help=f"file to write (default: {path(VERSION)})"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="only check that `netbox migrate` has nothing left to apply after the baseline",
    )
    args = parser.parse_args(argv)
    nb = LocalNetBox(log=lambda msg: print(f"netbox: {msg}", file=sys.stderr))
    try:
        with nb.lease():
            if args.check:
                nb.check_baseline()
                print(f"{path(VERSION).name}: complete (`netbox migrate --check` has nothing to apply)")
                return 0
            dump = nb.migrated_dump()
    except NetBoxError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    write(args.output, from_dump(dump, VERSION))
    print(f"wrote {args.output} ({args.output.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
