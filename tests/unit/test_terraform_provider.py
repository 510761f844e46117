"""The provider's plan step for ``hwaac_fabric_plane`` (no Terraform, no NetBox: literal pools): the planned
summary, the applied-intent safety checks (renumbering and removals refused unless allowed) and validation
diagnostics that carry attribute paths. The end-to-end behaviour with real terraform is in
tests/integration/test_terraform_*.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from tf.iface import PlanContext
from tf.types import Unknown
from tf.utils import Diagnostics

from hwaac_provider.fabric_plane import FabricPlane
from hwaac_provider.provider import HwaacProvider

REPO = Path(__file__).resolve().parents[2]
INTENT = (REPO / "tests/fixtures/intents/valid/netbox-sync.yml").read_text()  # 1 plane, 1 of 2 SUs, literal pools


def plan(tmp_path: Path, text: str, current: dict | None = None, **config: object) -> tuple[dict, Diagnostics]:
    path = tmp_path / "fabric.yml"
    path.write_text(text)
    diags = Diagnostics()
    planned = {
        "intent_file": str(path),
        "plane": 0,
        "pools": None,
        "allow_renumber": None,
        "allow_remove": None,
        "delete_active": None,
        **config,
    }
    out = FabricPlane(HwaacProvider()).plan(PlanContext(diags, "hwaac_fabric_plane", set()), current, planned)
    return out, diags


def errors(diags: Diagnostics) -> list[tuple[str, list]]:
    return [(d.summary, d.path) for d in diags.diagnostics if d.severity == "error"]


def test_plan_summarises_the_plane_and_keeps_the_applied_text(tmp_path: Path) -> None:
    out, diags = plan(tmp_path, INTENT)
    assert not errors(diags)
    assert out["id"] == "nbsync/plane-0" and out["intent"] == INTENT and out["drift"] == []
    assert out["counts"]["gpu_nodes"] == 4 and out["counts"]["switches"] == len(out["devices"])
    assert out["pools_used"]["addressing.leaf_spine"] == "10.21.0.0/24"


def test_growth_is_accepted_shrinking_is_refused_unless_allowed(tmp_path: Path) -> None:
    grown_text = INTENT.replace("su_count: 1", "su_count: 2")
    applied, _ = plan(tmp_path, INTENT)
    grown, diags = plan(tmp_path, grown_text, applied)
    assert not errors(diags)
    assert applied["devices"].items() < grown["devices"].items()  # only additions
    _, diags = plan(tmp_path, INTENT, grown)
    ((summary, path),) = errors(diags)
    assert summary.startswith("the intent removes") and "plane 0" in summary and path == ["intent_file"]
    _, diags = plan(tmp_path, INTENT, grown, allow_remove=True)
    assert not errors(diags)


def test_renumbering_existing_switches_is_refused_unless_allowed(tmp_path: Path) -> None:
    applied, _ = plan(tmp_path, INTENT)
    moved = INTENT.replace("leaf: 10.20.0.0/28", "leaf: 10.20.2.0/28")
    _, diags = plan(tmp_path, moved, applied)
    ((summary, _path),) = errors(diags)
    assert "renumbers" in summary
    detail = next(d.detail for d in diags.diagnostics if d.severity == "error")
    assert "loopback 10.20.0." in detail and "allow_renumber" in detail
    _, diags = plan(tmp_path, moved, applied, allow_renumber=True)
    assert not errors(diags)


def test_unknown_inputs_leave_the_summary_unknown(tmp_path: Path) -> None:
    out, diags = plan(tmp_path, INTENT, pools={"fabric-p2p": Unknown})
    assert not errors(diags) and out["counts"] is Unknown and out["devices"] is Unknown


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (INTENT.replace("rails: 2", "rails: two"), "fabric.rails"),
        (INTENT.replace("su_count: 1", "su_count: 3"), "fabric.su_capacity"),
    ],
)
def test_invalid_intent_is_an_error_on_intent_file_naming_file_line_and_field(
    tmp_path: Path, text: str, field: str
) -> None:
    diags = Diagnostics()
    (tmp_path / "fabric.yml").write_text(text)
    FabricPlane(HwaacProvider()).validate(
        diags, "hwaac_fabric_plane", {"intent_file": str(tmp_path / "fabric.yml"), "plane": 0}
    )
    ((summary, path),) = errors(diags)
    assert summary.startswith(f"invalid intent {tmp_path / 'fabric.yml'}:") and summary.endswith(field)
    assert path == ["intent_file"]


def test_a_negative_or_fractional_plane_is_an_error_on_plane(tmp_path: Path) -> None:
    for bad in (-1, 0.5):
        diags = Diagnostics()
        FabricPlane(HwaacProvider()).validate(diags, "hwaac_fabric_plane", {"intent_file": Unknown, "plane": bad})
        assert [p for _s, p in errors(diags)] == [["plane"]]
    _, diags = plan(tmp_path, INTENT, plane=1)
    assert errors(diags) == [("plane 1 is not in fabric nbsync, which has planes 0..0", ["plane"])]


def test_every_hwaac_module_imported_in_a_method_is_preloaded() -> None:
    """The provider serves on several threads: a module first imported by two of them at once can come back
    partially initialised, so each one the handlers import lazily is imported before serving."""
    import ast

    from hwaac_provider.__main__ import PRELOAD

    lazy: set[str] = set()
    for path in (REPO / "terraform/hwaac_provider").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lazy |= {
                    n.module
                    for n in ast.walk(node)
                    if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("hwaac.")
                }
    assert lazy, "no lazy import found: the scan is broken"
    assert lazy <= set(PRELOAD), f"imported in a method but not preloaded: {sorted(lazy - set(PRELOAD))}"
