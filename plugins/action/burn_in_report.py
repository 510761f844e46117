# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Controller side of aiinfra.hwaac.burn_in_report (documentation in plugins/modules/burn_in_report.py): a thin
adapter over :func:`hwaac.health.report.node_report`."""

from __future__ import annotations

import json
import os
from typing import Any

from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_action import HwaacAction
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_imports import HwaacImports
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.report_files import write_files
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.verdict import verdict_msg

with HwaacImports() as HWAAC:  # this collection's Python core (same version), checked when the action runs
    from hwaac.health.report import node_report, report_markdown

MODULE = "aiinfra.hwaac.burn_in_report"


def interfaces_from_files(files: str | None) -> dict[str, str]:
    """RDMA device -> Linux interface from the node's rendered ``nic-roce.json``."""
    path = os.path.join(files or "", "nic-roce.json")
    if not files or not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as fh:
        return {p["hca"]: p["interface"] for p in json.load(fh).get("ports", []) if p.get("hca")}


class ActionModule(HwaacAction, module=MODULE, hwaac=HWAAC):
    """Verdict over stages; report files on the controller."""

    _requires_connection = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, task_vars, args = self.start(tmp, task_vars)
        node = args["node"] or task_vars.get("inventory_hostname", "")
        interfaces = args["interfaces"] or interfaces_from_files(self._templar.template(task_vars.get("hwaac_files")))
        report = node_report(node, args["profile"], args["stages"], interfaces)
        keep = ("status", "codes", "action", "stages", "findings", "hardware", "evidence")
        result.update(changed=False, **{k: report[k] for k in keep})
        if args["report_dir"]:
            base = os.path.join(args["report_dir"], f"{node}.{args['kind']}")
            files = {
                base + ".json": json.dumps(report, indent=2, sort_keys=True) + "\n",
                base + ".md": report_markdown(report),
            }
            result.update(changed=write_files(files, self._task.check_mode), files=sorted(files))
        result["msg"] = verdict_msg(node, report)
        return result
