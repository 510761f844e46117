#!/usr/bin/env python3
"""Golden files of the example fabrics: ``tests/golden/<fabric>/`` for each ``inventory/examples/<fabric>/``.

Each folder holds what ``hwaac plan`` renders for the first device of each switch role and node kind, the
fabric report, and ``manifest.sha256`` (``sha256sum`` format) over every rendered file, so a change to any
device shows. ``python scripts/golden.py`` rewrites the folders; ``--check`` compares and exits 1 on a change.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "inventory" / "examples"
GOLDEN = ROOT / "tests" / "golden"
MANIFEST = "manifest.sha256"
REPORT = "docs/report.md"
MAX_DIFF_LINES = 200


def fabrics() -> list[str]:
    """The example fabrics: each folder of ``inventory/examples`` that holds a ``fabric.yml``."""
    return sorted(p.parent.name for p in EXAMPLES.glob("*/fabric.yml"))


def render(fabric: str) -> dict[str, bytes]:
    """Golden file contents of one example fabric, by path relative to its golden folder."""
    from hwaac.plan import build_plan
    from hwaac.render import render_to_dir
    from hwaac.validate import load_intent

    plan = build_plan(load_intent(EXAMPLES / fabric), validate=False)
    with tempfile.TemporaryDirectory(prefix="hwaac-golden-") as tmp:
        out = Path(tmp) / fabric
        render_to_dir(plan, out)
        files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    firsts = {}
    for switch in plan.switches:
        firsts.setdefault(("switch", switch.role), f"switches/{switch.name}/")
    for node in plan.nodes:
        firsts.setdefault(("node", node.kind), f"hosts/{node.name}/")
    prefixes = tuple(firsts.values())
    golden = {rel: data for rel, data in files.items() if rel.startswith(prefixes) or rel == REPORT}
    golden[MANIFEST] = "".join(f"{hashlib.sha256(data).hexdigest()}  {rel}\n"
                               for rel, data in sorted(files.items())).encode()
    return golden


def on_disk(folder: Path) -> dict[str, bytes]:
    """The files under ``folder`` by relative path (empty when it does not exist)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def manifest_changes(old: bytes, new: bytes) -> list[str]:
    """The entries of two manifests that differ: ``changed``, ``added`` or ``removed`` and the path."""
    def entries(text: bytes) -> dict[str, str]:
        return {rel: digest for digest, _sep, rel in (line.partition("  ") for line in text.decode().splitlines())}

    before, after = entries(old), entries(new)
    out = [f"changed {rel}" for rel in sorted(before.keys() & after.keys()) if before[rel] != after[rel]]
    out += [f"added {rel}" for rel in sorted(after.keys() - before.keys())]
    out += [f"removed {rel}" for rel in sorted(before.keys() - after.keys())]
    return out


def differences(expected: dict[str, bytes], actual: dict[str, bytes]) -> list[str]:
    """Lines describing how the golden files ``expected`` differ from the rendering ``actual``: a unified diff
    per changed file, the changed entries of the manifest, files missing or extra; empty when they are equal."""
    out: list[str] = []
    for rel in sorted(expected.keys() | actual.keys()):
        old, new = expected.get(rel), actual.get(rel)
        if old == new:
            continue
        if old is None or new is None:
            out.append(f"{rel}: {'not in the golden files' if old is None else 'no longer rendered'}")
        elif rel == MANIFEST:
            out.append(f"{rel}: the rendered files changed:")
            out += [f"  {line}" for line in manifest_changes(old, new)]
        else:
            diff = list(difflib.unified_diff(old.decode().splitlines(), new.decode().splitlines(),
                                             f"golden/{rel}", f"rendered/{rel}", lineterm=""))
            if len(diff) > MAX_DIFF_LINES:
                diff = [*diff[:MAX_DIFF_LINES], f"... {len(diff) - MAX_DIFF_LINES} more diff lines"]
            out += diff
    return out


def write(folder: Path, files: dict[str, bytes]) -> None:
    """Replace ``folder`` with exactly ``files``."""
    shutil.rmtree(folder, ignore_errors=True)
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fabric", nargs="*", help="example fabrics (default: all of inventory/examples)")
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 and show the diff on a change")
    args = parser.parse_args(argv)
    names = args.fabric or fabrics()
    unknown = sorted(set(names) - set(fabrics()))
    if unknown:
        parser.error(f"not an example fabric: {', '.join(unknown)}")
    changed = 0
    for name in names:
        files = render(name)
        if args.check:
            lines = differences(on_disk(GOLDEN / name), files)
            changed += bool(lines)
            print(f"{name}: {'differs from its golden files' if lines else 'matches its golden files'}")
            for line in lines:
                print(line)
        else:
            write(GOLDEN / name, files)
            print(f"{name}: wrote {len(files)} golden files to {(GOLDEN / name).relative_to(ROOT)}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
