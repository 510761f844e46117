# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Controller side of aiinfra.hwaac.bgp_sessions (documentation in plugins/modules/bgp_sessions.py): reads the
sessions through the host module, judges them with :func:`hwaac.apply.bgp_gate`, and reads again after ``delay``
seconds until the gate passes or ``retries`` are used up."""

from __future__ import annotations

import time
from typing import Any

from ansible.errors import AnsibleActionFail

from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_action import HwaacAction
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_imports import HwaacImports

with HwaacImports() as HWAAC:  # this collection's Python core (same version), checked when the action runs
    from hwaac.apply import bgp_gate, parse_bgp_summary

MODULE = "aiinfra.hwaac.bgp_sessions"

ARGUMENT_SPEC: dict[str, dict[str, Any]] = {
    "neighbors": {"type": "list", "elements": "str"},
    "vrf": {"type": "str", "default": "default"},
    "min_up": {"type": "float", "default": 1.0},
    "retries": {"type": "int", "default": 12},
    "delay": {"type": "float", "default": 5},
}


class ActionModule(HwaacAction, module=MODULE, hwaac=HWAAC, spec=ARGUMENT_SPEC):
    """Poll FRR's session states until the expected neighbours are Established."""

    _requires_connection = True

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, task_vars, args = self.start(tmp, task_vars)
        if args["retries"] < 0 or args["delay"] < 0:
            raise AnsibleActionFail(f"{MODULE}: retries and delay must not be negative")
        if not 0.0 <= args["min_up"] <= 1.0:
            raise AnsibleActionFail(f"{MODULE}: min_up must be within 0..1, got {args['min_up']}")

        module_args = {"vrf": args["vrf"], "retries": 0, "delay": 0}
        attempts = 0
        while True:
            attempts += 1
            read = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
            if read.get("failed"):
                return {**result, "failed": True, "msg": read.get("msg"), "attempts": attempts}
            try:
                summary = parse_bgp_summary(read.get("stdout", ""))
            except ValueError as exc:
                return {
                    **result,
                    "failed": True,
                    "msg": str(exc),
                    "attempts": attempts,
                    "stdout": read.get("stdout", ""),
                }
            verdict = bgp_gate(summary, args["neighbors"], min_up=args["min_up"])
            if verdict.passed or attempts > args["retries"]:
                break
            time.sleep(args["delay"])

        result.update(
            changed=False,
            configured=len(verdict.expected),
            established=len(verdict.established),
            down=verdict.down,
            attempts=attempts,
            router_id=summary.router_id,
            stdout=read.get("stdout", ""),
            msg=verdict.message(),
        )
        if not verdict.passed:
            result["failed"] = True
            result["msg"] = f"BGP health gate failed after {attempts} read(s): {verdict.message()}"
        return result
