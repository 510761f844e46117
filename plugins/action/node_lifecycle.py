# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Controller side of aiinfra.hwaac.node_lifecycle (documentation in plugins/modules/node_lifecycle.py): a thin
adapter over :func:`hwaac.netbox.lifecycle.apply_transitions`. The NetBox token never enters the result."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ansible.errors import AnsibleActionFail

from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_action import HwaacAction
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_imports import HwaacImports

with HwaacImports() as HWAAC:  # this collection's Python core (same version), checked when the action runs
    from hwaac.health.lifecycle import BreakerPolicy, State, state_of
    from hwaac.netbox.errors import NetBoxError
    from hwaac.netbox.lifecycle import LIFECYCLE_FIELD, TransitionRequest, apply_transitions, evidence_from

MODULE = "aiinfra.hwaac.node_lifecycle"


class ActionModule(HwaacAction, module=MODULE, hwaac=HWAAC):
    """Lifecycle moves in NetBox, decided on the controller."""

    _requires_connection = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, task_vars, args = self.start(tmp, task_vars)
        if args["names"]:
            if not args["to"] or not args["reason"]:
                raise AnsibleActionFail(f"{MODULE}: names needs to and reason")
            args["transitions"] = [
                *(args["transitions"] or []),
                *(
                    {"name": n, "to": args["to"], "reason": args["reason"], "evidence": args["evidence"], "via": None}
                    for n in args["names"]
                ),
            ]
        if args["transitions"] is None and not args["query"]:
            raise AnsibleActionFail(f"{MODULE}: give transitions (or names with to and reason), query, or both")
        try:
            policy = BreakerPolicy(args["max_share"], timedelta(seconds=args["window_seconds"]))
        except ValueError as exc:
            raise AnsibleActionFail(f"{MODULE}: {exc}") from None
        client = self.netbox(args)
        result["changed"] = False
        if args["query"]:
            recs = client.read("devices", "id,name,status,custom_fields", name=args["query"])
            found = {r["name"]: r for r in recs}
            missing = sorted(set(args["query"]) - set(found))
            if missing:
                raise AnsibleActionFail(f"{MODULE}: no such device(s) in NetBox: {', '.join(missing)}")
            result["states"] = {
                n: (
                    s.value
                    if (
                        s := state_of(
                            (r.get("status") or {}).get("value"), (r.get("custom_fields") or {}).get(LIFECYCLE_FIELD)
                        )
                    )
                    else None
                )
                for n, r in found.items()
            }
        if not args["transitions"]:
            result.update(outcomes=[], moved={}, blocked=[], alerts=[], dry_run=not args["enforce"])
            return result
        try:
            evidence = [evidence_from(t["evidence"]) for t in args["transitions"]]
        except ValueError as exc:
            raise AnsibleActionFail(f"{MODULE}: evidence: {exc}") from None
        requests = [
            TransitionRequest(t["name"], State(t["to"]), t["reason"], ev, State(t["via"]) if t.get("via") else None)
            for t, ev in zip(args["transitions"], evidence, strict=True)
        ]
        enforce = args["enforce"] and not self._task.check_mode
        try:
            report = apply_transitions(
                client,
                requests,
                mode="enforce" if enforce else "dry_run",
                fabric=args["fabric"],
                pool=args["pool"],
                breaker=policy,
            )
        except NetBoxError as exc:
            raise AnsibleActionFail(f"{MODULE}: {exc}") from None
        outcomes = [vars(o) for o in report.outcomes]
        moved: dict[str, list[str]] = {}
        for o in report.outcomes:
            if o.result in ("moved", "would_move"):
                moved.setdefault(o.to_state, []).append(o.device)
        result.update(
            outcomes=outcomes,
            moved=moved,
            blocked=[o.device for o in report.outcomes if o.result == "blocked"],
            alerts=report.alerts,
            dry_run=not enforce,
            breaker=None if report.breaker is None else vars(report.breaker),
        )
        # changed: nodes moved; in check mode, whether this task (with its enforce) would move any
        result["changed"] = bool(moved) and args["enforce"]
        if self._task.diff:
            result["diff"] = [
                {
                    "before_header": o.device,
                    "after_header": o.device,
                    "before": f"lifecycle: {o.from_state}\n",
                    "after": f"lifecycle: {o.to_state}\n",
                }
                for o in report.outcomes
                if o.result in ("moved", "would_move")
            ]
        if report.alerts:
            self._display.warning(f"{MODULE}: {report.alerts[0]}")
        lines = [f"{o.device}: {o.from_state} -> {o.to_state}: {o.result}" for o in report.outcomes]
        result["msg"] = ("dry run: " if not enforce else "") + "; ".join(lines)
        return result
