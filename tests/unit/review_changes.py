"""A change of the demo's fabric.yml as two folders, the sides ``hwaac review`` compares; shared by
test_review.py, test_review_report.py and test_review_sides.py."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "inventory/demo/fabric.yml"


def write_change(tmp_path: Path, old: str, new: str) -> tuple[Path, Path]:
    base = DEMO.read_text()
    assert base.count(old) == 1
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    (tmp_path / "old/fabric.yml").write_text(base)
    (tmp_path / "new/fabric.yml").write_text(base.replace(old, new))
    return tmp_path / "old", tmp_path / "new"
