# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Controller side of aiinfra.hwaac.fabric_verify (documentation in plugins/modules/fabric_verify.py): a thin
adapter over :func:`hwaac.verify.runner.judge` and :mod:`hwaac.verify.report`."""

from __future__ import annotations

import os
import re
from typing import Any

from ansible.errors import AnsibleActionFail

from ansible_collections.aiinfra.hwaac.plugins.module_utils.verify_specs import SPECS
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_action import HwaacAction
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_imports import HwaacImports
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.report_files import write_files

with HwaacImports() as HWAAC:  # this collection's Python core (same version), checked when the action runs
    from hwaac.verify.inputs import InputError, load_inputs
    from hwaac.verify.raw import read_facts_folder
    from hwaac.verify.report import faults, render
    from hwaac.verify.results import Status
    from hwaac.verify.runner import judge

MODULE = "aiinfra.hwaac.fabric_verify"
FILES = {"json": "verify.json", "junit": "verify.xml", "markdown": "verify.md", "table": "verify.txt"}
TIMING = re.compile(r'^\s*"(collect_s|judge_s)": |^.*\((judge_s|collect_s) [0-9.]+.*\)$')  # timings are no change


class ActionModule(HwaacAction, module=MODULE, hwaac=HWAAC, spec=SPECS["fabric_verify"]):
    """Judge a facts folder; write the reports; fail on FAIL/ERROR."""

    _requires_connection = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, task_vars, args = self.start(tmp, task_vars)
        try:
            inputs = load_inputs(args["plan"])
            outputs = read_facts_folder(args["facts"])
            devices = args["devices"] or sorted(set(outputs) & set(inputs.devices()))
            unknown = sorted(set(devices) - set(inputs.devices()))
            if unknown:
                raise ValueError(f"devices not in the plan: {', '.join(unknown)}")
            report = judge(inputs, outputs, args["checks"], devices)
        except (ValueError, InputError) as exc:
            raise AnsibleActionFail(f"{MODULE}: {exc}") from None
        bad = [r for r in report.results if r.status in (Status.FAIL, Status.ERROR)]
        found = faults(report)
        result.update(
            changed=False,
            passed=report.passed,
            counts=report.counts(),
            faults=found,
            failures=[r.to_dict() for r in bad[:50]],
        )
        if args["report_dir"]:
            files = {os.path.join(args["report_dir"], FILES[f]): render(report, f) for f in args["formats"]}
            result.update(changed=write_files(files, self._task.check_mode, TIMING), files=sorted(files))
        counts = ", ".join(f"{v} {k}" for k, v in report.counts().items())
        named = "; ".join(f"{f['fault']} ({f['object']}: {', '.join(f['checks'])})" for f in found[:10])
        result["msg"] = f"{'PASS' if report.passed else 'FAIL'}: {counts}" + (f"; faults: {named}" if named else "")
        if not report.passed and args["fail_on_fail"]:
            result["failed"] = True
        return result
