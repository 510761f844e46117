# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Controller side of aiinfra.hwaac.fabric_facts (documentation in plugins/modules/fabric_facts.py): the commands
come from :func:`hwaac.verify.runner.device_requests`, the host module runs them, the outputs go to the facts
folder as :mod:`hwaac.verify.raw` writes it."""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleActionFail

from ansible_collections.aiinfra.hwaac.plugins.module_utils.verify_specs import SPECS
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_action import HwaacAction
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_imports import HwaacImports

with HwaacImports() as HWAAC:  # this collection's Python core (same version), checked when the action runs
    from hwaac.verify.ansible import outputs_from_module
    from hwaac.verify.inputs import InputError
    from hwaac.verify.raw import write_facts_folder
    from hwaac.verify.runner import device_requests

MODULE = "aiinfra.hwaac.fabric_facts"


class ActionModule(HwaacAction, module=MODULE, hwaac=HWAAC, spec=SPECS["fabric_facts"]):
    """Commands from the plan; raw outputs to the controller's facts folder."""

    _requires_connection = True

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, task_vars, args = self.start(tmp, task_vars)
        device = args["device"] or task_vars.get("inventory_hostname", "")
        try:
            commands = device_requests(args["plan"], device, args["checks"])
        except (ValueError, InputError) as exc:
            raise AnsibleActionFail(f"{MODULE}: {exc}") from None
        if not commands:
            return {
                **result,
                "changed": False,
                "commands": 0,
                "failed_commands": {},
                "msg": f"{device}: the checks read nothing here",
            }
        module_args = {k: args[k] for k in ("netns", "timeout", "parallel") if args[k] is not None}
        module_args.update(plan=args["plan"], commands=[{"argv": list(c.argv)} for c in commands])
        ran = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
        if ran.get("failed"):
            return {**result, **ran}
        try:
            outputs = outputs_from_module(ran, f"{MODULE} on {device}")
        except ValueError as exc:
            raise AnsibleActionFail(str(exc)) from None
        failed = {k: r.error for k, r in outputs.items() if r.error}
        result.update(
            changed=False,
            commands=len(outputs),
            failed_commands=failed,
            msg=f"{device}: {len(outputs)} commands, {len(failed)} could not run",
        )
        if args["dest"]:
            (path,) = write_facts_folder(args["dest"], {device: outputs})
            result["file"] = str(path)
        if args["return_outputs"]:
            result["outputs"] = {k: r.to_dict() for k, r in outputs.items()}
        return result
