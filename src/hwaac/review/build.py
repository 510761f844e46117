"""Build a review: the intent change, the plan diff, the NetBox dry run, the Terraform plan, each device's config
change, the blast radius, the rollout batches, risk flags and the gates, as one JSON-ready document. A base that
does not validate is reported with its issues, and only what needs no base plan is shown."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hwaac.errors import IntentError, IntentIssue
from hwaac.model.intent import Intent
from hwaac.plan import build_plan
from hwaac.plan.diff import SECTIONS, PlanDiff, diff_plans, storage_changes
from hwaac.render import plan_document, render_to_dir
from hwaac.review import impact
from hwaac.review.files import compare_trees
from hwaac.review.sources import Side

FORMAT = "hwaac-review/1"
NetBoxDryRun = Callable[[Any], dict[str, Any]]


@dataclass
class Options:
    allow_renumber: bool = False
    allow_remove: bool = False
    batch_size: str = "25%"  # the playbooks' default serial
    many_sus: int = 1  # flag a change that touches more SUs than this


def build_review(
    old: Side,
    new: Side,
    *,
    pool_lookup: Callable[..., Any] | None = None,
    netbox: NetBoxDryRun | None = None,
    terraform: dict[str, Any] | None = None,
    options: Options | None = None,
) -> dict[str, Any]:
    """The review of the change from ``old`` to ``new`` (see the module docstring).

    A base (``old``) that does not validate (a change that fixes a broken intent, or one that a newer hwaac
    rule refuses) is not an error: the review has the verdict ``base-invalid``, lists the base's issues
    (``base_issues``, each with its file and line), the risk flag ``base-invalid``, the intent change when the
    base is still YAML, and the NetBox dry run and the Terraform plan, which compare the new plan with what is
    recorded; ``plan``, ``devices``, ``blast_radius``, ``rollout`` and ``gates`` need the base's plan and are
    None. No renumbering or removal can be found, so nothing is refused.

    Args:
        netbox: runs a sync dry run of the new plan against the NetBox in use and returns its section (None:
            the section says it was not run).
        terraform: the summary of :func:`hwaac.review.terraform.summarize` (None: no plan given).

    Raises:
        hwaac.errors.IntentError: the new intent is invalid or cannot be read.
        hwaac.netbox.errors.NetBoxError: from ``pool_lookup``: NetBox cannot be reached to resolve a NetBox pool.
    """
    opts = options or Options()
    new_intent = new.intent(pool_lookup)
    if new_intent is None:
        raise ValueError(f"{new.label}: the fabric to review does not exist")
    try:
        old_intent = old.intent(pool_lookup)
    except IntentError as exc:
        return _base_invalid_review(old, new, new_intent, exc.issues, netbox, terraform)
    new_plan = build_plan(new_intent, validate=False)
    old_plan = None if old_intent is None else build_plan(old_intent, validate=False)
    new_doc = plan_document(new_plan)
    old_doc = {} if old_plan is None else plan_document(old_plan)
    pdiff = diff_plans(old_doc, new_doc)
    intent_changes = storage_changes(old.raw(), new.raw())
    with tempfile.TemporaryDirectory(prefix="hwaac-review-") as tmp:
        trees = [Path(tmp) / "old", Path(tmp) / "new"]
        for plan, out in ((old_plan, trees[0]), (new_plan, trees[1])):
            if plan is None:
                out.mkdir()
            else:
                render_to_dir(plan, out)
        rendered = compare_trees(*trees)
        gates = impact.gates(new_doc, rendered.devices, trees[1])
    radius = impact.blast_radius(rendered.devices, pdiff, old_doc, new_doc)
    refusals = _refusals(pdiff, opts)
    return {
        "format": FORMAT,
        "fabric": new_intent.fabric.name,
        "base": old.label
        if old.exists
        else (f"{old.label} (no fabric there: everything is added; if the fabric moved, review with --old)"),
        "head": new.label,
        "verdict": "refused" if refusals else "ok",
        "base_issues": [],
        "refusals": refusals,
        "intent": _intent_section(intent_changes),
        "plan": _plan_section(pdiff),
        "netbox": netbox(new_plan) if netbox is not None else {"status": "not run"},
        "terraform": terraform if terraform is not None else {"status": "not given"},
        "devices": {name: d.to_json() for name, d in rendered.devices.items()},
        "documents": rendered.documents,
        "blast_radius": radius,
        "rollout": impact.rollout(new_doc, rendered.devices, opts.batch_size),
        "risks": [r.to_json() for r in impact.risks(intent_changes, pdiff, rendered.devices, radius, opts.many_sus)],
        "gates": gates,
    }


def _base_invalid_review(
    old: Side,
    new: Side,
    new_intent: Intent,
    issues: list[IntentIssue],
    netbox: NetBoxDryRun | None,
    terraform: dict[str, Any] | None,
) -> dict[str, Any]:
    """The review of a valid ``new`` over a base that does not validate: what needs no base plan."""
    try:
        intent: list[dict[str, Any]] | None = _intent_section(storage_changes(old.raw(), new.raw()))
    except IntentError:  # not even YAML: its issues say why
        intent = None
    new_plan = build_plan(new_intent, validate=False)
    return {
        "format": FORMAT,
        "fabric": new_intent.fabric.name,
        "base": old.label,
        "head": new.label,
        "verdict": "base-invalid",
        "base_issues": [{**asdict(i), "text": str(i)} for i in issues],
        "refusals": [],
        "intent": intent,
        "plan": None,
        "netbox": netbox(new_plan) if netbox is not None else {"status": "not run"},
        "terraform": terraform if terraform is not None else {"status": "not given"},
        "devices": None,
        "documents": None,
        "blast_radius": None,
        "rollout": None,
        "risks": [
            impact.Risk(
                "base-invalid",
                f"the base does not validate ({len(issues)} problem(s)): the plan, "
                "the devices' configs, the blast radius, the rollout and the gates are not compared "
                "with it, and no renumbering or removal of what is in service can be found here; "
                "the NetBox dry run and the Terraform plan compare with what is recorded",
            ).to_json()
        ],
        "gates": None,
    }


def _intent_section(changes: dict[str, tuple[Any, Any]]) -> list[dict[str, Any]]:
    return [{"path": p or "(whole intent)", "old": o, "new": n} for p, (o, n) in changes.items()]


def _plan_section(d: PlanDiff) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for s in SECTIONS:
        out[s] = {
            "added": sorted(d.added.get(s, [])),
            "removed": sorted(d.removed.get(s, [])),
            "changed": {
                name: {f: [o, n] for f, (o, n) in fields.items()}
                for name, fields in sorted(d.changed.get(s, {}).items())
            },
        }
    out["storage"] = {p or "(whole section)": [o, n] for p, (o, n) in d.storage.items()}
    out["renumbered"] = d.renumbered
    out["removals"] = d.removals
    out["affected"] = d.affected
    return out


def _refusals(d: PlanDiff, opts: Options) -> list[dict[str, Any]]:
    out = []
    if d.renumbered and not opts.allow_renumber:
        out.append(
            {
                "kind": "renumber",
                "flag": "--allow-renumber",
                "items": d.renumbered,
                "why": "the change moves existing allocations (addresses, ASNs, cable ends) of devices in "
                "service: applying it re-addresses or re-cables them. Grow within su_capacity instead, "
                "or accept it explicitly with --allow-renumber and plan the outage",
            }
        )
    if d.removals and not opts.allow_remove:
        out.append(
            {
                "kind": "remove",
                "flag": "--allow-remove",
                "items": d.removals,
                "why": "the change removes devices or cables that NetBox and the fabric have in service; drain "
                "them first and accept it explicitly with --allow-remove",
            }
        )
    return out


def netbox_dry_run(url: str, token: str) -> NetBoxDryRun:
    """A ``netbox`` callable for :func:`build_review`: ``hwaac netbox sync --dry-run`` of the new plan."""
    from hwaac.netbox.errors import NetBoxError
    from hwaac.netbox.sync import SyncConflict, format_report, sync_plan

    def run(plan: Any) -> dict[str, Any]:
        try:
            rep = sync_plan(plan, url, token, dry_run=True)
        except SyncConflict as exc:
            return {
                "status": "conflict",
                "conflicts": exc.conflicts,
                "message": "the sync would stop before any write: objects hwaac does not own are in the way",
            }
        except NetBoxError as exc:
            return {"status": "error", "message": str(exc).splitlines()[0]}
        counts = {
            kind: dict(zip(("create", "update", "delete"), rep.counts(kind), strict=True))
            for kind, ch in rep.changes.items()
            if ch
        }
        return {
            "status": "changes" if rep.changed else "no changes",
            "counts": counts,
            "lines": format_report(rep, plan.intent.fabric.name),
        }

    return run
