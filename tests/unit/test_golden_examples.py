"""Golden files of every example fabric: what ``hwaac plan`` renders must equal ``tests/golden/<fabric>/``.

On a change the test shows the unified diff of each golden file and the changed entries of the manifest.
Regenerate with ``.venv/bin/python scripts/golden.py`` and review the diff before committing it.
"""

from __future__ import annotations

import pytest

from scripts import golden


@pytest.mark.parametrize("fabric", golden.fabrics())
def test_rendering_matches_golden_files(fabric: str) -> None:
    lines = golden.differences(golden.on_disk(golden.GOLDEN / fabric), golden.render(fabric))
    if lines:
        pytest.fail(
            f"{fabric}: the rendering differs from tests/golden/{fabric} "
            "(regenerate with scripts/golden.py and review):\n" + "\n".join(lines),
            pytrace=False,
        )


def test_golden_folders_are_the_examples() -> None:
    """A new example gets its golden files; a removed one leaves no stale folder (demo has its own tests)."""
    folders = sorted(p.name for p in golden.GOLDEN.iterdir() if p.is_dir() and p.name != "demo")
    assert folders == golden.fabrics() != []


def test_manifest_changes_name_each_entry() -> None:
    old = b"aa  hosts/a/nccl.env\nbb  switches/s/config_db.json\ncc  docs/report.md\n"
    new = b"aa  hosts/a/nccl.env\nbX  switches/s/config_db.json\ndd  docs/topology.svg\n"
    assert golden.manifest_changes(old, new) == [
        "changed switches/s/config_db.json",
        "added docs/topology.svg",
        "removed docs/report.md",
    ]
