"""A Terraform plan's summary for a review, from ``terraform show -json`` of a saved plan.

Reads the documented JSON output format (Terraform's "JSON Output Format": ``resource_changes[].change`` with
``actions``, ``before``, ``after``, ``before_sensitive``, ``after_sensitive``, ``after_unknown``). A sensitive value
is never shown: only that it changes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

SHOW_TIMEOUT_S = 300
SENSITIVE = "(sensitive)"
UNKNOWN = "(known after apply)"


class TerraformPlanError(Exception):
    """The plan file cannot be read (not a saved plan nor its JSON, terraform missing or failing)."""


def read_plan_json(path: str | Path) -> dict[str, Any]:
    """The plan at ``path``: JSON as ``terraform show -json`` prints it, or a saved plan file, shown with
    ``terraform show -json`` run in the file's folder (where ``terraform init`` ran)."""
    p = Path(path)
    data = p.read_bytes()
    if data.lstrip()[:1] == b"{":
        try:
            doc = json.loads(data)
        except ValueError as exc:
            raise TerraformPlanError(f"{p}: not valid JSON ({exc})") from None
    else:
        exe = shutil.which("terraform")
        if exe is None:
            raise TerraformPlanError(
                f"{p}: a saved plan needs terraform on PATH (or pass `terraform show -json`'s output instead)"
            )
        try:
            proc = subprocess.run(
                [exe, "show", "-json", "-no-color", p.resolve().name],
                cwd=p.resolve().parent,
                capture_output=True,
                encoding="utf-8",
                errors="replace",
                timeout=SHOW_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise TerraformPlanError(f"{p}: terraform show took more than {SHOW_TIMEOUT_S} s") from None
        if proc.returncode != 0:
            err = [line for line in proc.stderr.splitlines() if line.strip()]
            raise TerraformPlanError(f"{p}: terraform show -json failed: {err[-1] if err else proc.returncode}")
        try:
            doc = json.loads(proc.stdout)
        except ValueError as exc:
            raise TerraformPlanError(
                f"{p}: terraform show -json printed no JSON ({exc}); expected a plan saved by "
                "`terraform plan -out FILE`"
            ) from None
    if not isinstance(doc, dict) or "format_version" not in doc:
        raise TerraformPlanError(
            f"{p}: not a Terraform plan (no format_version; expected `terraform show -json` of a saved plan)"
        )
    if "planned_values" not in doc and "resource_changes" not in doc:
        raise TerraformPlanError(
            f"{p}: this is Terraform state, not a plan (no planned_values or resource_changes): "
            "pass `terraform show -json` of a plan saved with `terraform plan -out FILE`"
        )
    changes = doc.get("resource_changes", [])
    if not isinstance(changes, list) or not all(
        isinstance(rc, dict) and isinstance(rc.get("change"), dict) for rc in changes
    ):
        raise TerraformPlanError(
            f"{p}: resource_changes must be a list of objects with a change object, as `terraform show -json` prints it"
        )
    return doc


def summarize(doc: dict[str, Any]) -> dict[str, Any]:
    """Counts per action and, per resource that changes, its actions and changed attributes (old -> new)."""
    counts: Counter[str] = Counter()
    resources = []
    for rc in doc.get("resource_changes") or []:
        change = rc.get("change") or {}
        action = _action(change.get("actions") or ["no-op"])
        counts[action] += 1
        if action in ("no-op", "read"):
            continue
        resources.append({"address": rc.get("address", "?"), "action": action, "attributes": _attributes(change)})
    drift = [rc.get("address", "?") for rc in doc.get("resource_drift") or []]
    return {
        "terraform_version": doc.get("terraform_version"),
        "counts": dict(sorted(counts.items())),
        "resources": resources,
        "drift": drift,
        "errored": bool(doc.get("errored")),
    }


def _action(actions: list[str]) -> str:
    if sorted(actions) == ["create", "delete"]:
        return "replace"
    return actions[0] if len(actions) == 1 else "+".join(actions)


def _attributes(change: dict[str, Any]) -> dict[str, list[str]]:
    before, after = change.get("before") or {}, change.get("after") or {}
    if not isinstance(before, dict) or not isinstance(after, dict):
        return {}
    hidden_b, hidden_a = change.get("before_sensitive") or {}, change.get("after_sensitive") or {}
    unknown = change.get("after_unknown") or {}
    out = {}
    for key in sorted(set(before) | set(after) | set(unknown if isinstance(unknown, dict) else {})):
        if before.get(key) == after.get(key) and not (isinstance(unknown, dict) and unknown.get(key)):
            continue
        old = SENSITIVE if _hidden(hidden_b, key) else _short(before.get(key))
        new = (
            SENSITIVE
            if _hidden(hidden_a, key)
            else UNKNOWN
            if isinstance(unknown, dict) and unknown.get(key) is True
            else _short(after.get(key))
        )
        out[key] = [old, new]
    return out


def _hidden(marks: Any, key: str) -> bool:
    return marks is True or (isinstance(marks, dict) and bool(marks.get(key)))


def _short(value: Any, limit: int = 80) -> str:
    text = "(none)" if value is None else json.dumps(value, sort_keys=True) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 3] + "..."
