# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Controller side of aiinfra.hwaac.rma_report (documentation in plugins/modules/rma_report.py): a thin adapter over
:func:`hwaac.health.rma.rma_report` with the NetBox reads of :mod:`hwaac.netbox.lifecycle`."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from typing import Any

from ansible.errors import AnsibleActionFail

from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_action import HwaacAction
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_imports import HwaacImports
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.report_files import write_files

with HwaacImports() as HWAAC:  # this collection's Python core (same version), checked when the action runs
    from hwaac.health.rma import rma_markdown, rma_report
    from hwaac.netbox.errors import NetBoxError
    from hwaac.netbox.lifecycle import device_journal, device_record

MODULE = "aiinfra.hwaac.rma_report"


_STAMP = re.compile(r'^\s*("generated":|- Generated:)')  # the report's timestamp line (JSON and Markdown)


class ActionModule(HwaacAction, module=MODULE, hwaac=HWAAC):
    """The RMA report of one node, from NetBox."""

    _requires_connection = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, task_vars, args = self.start(tmp, task_vars)
        node = args["node"] or task_vars.get("inventory_hostname", "")
        client = self.netbox(args)
        try:
            device = device_record(client, node)
            if device is None:
                raise AnsibleActionFail(f"{MODULE}: {node}: no such device in NetBox")
            generated = datetime.now(UTC).isoformat(timespec="seconds")
            report = rma_report(device, device_journal(client, node), generated=generated)
        except NetBoxError as exc:
            raise AnsibleActionFail(f"{MODULE}: {exc}") from None
        files = {
            os.path.join(args["dest"], f"{node}.rma.json"): json.dumps(report, indent=2, sort_keys=True) + "\n",
            os.path.join(args["dest"], f"{node}.rma.md"): rma_markdown(report),
        }
        changed = write_files(files, self._task.check_mode, ignore=_STAMP)
        result.update(
            changed=changed,
            files=sorted(files),
            fault_codes=report["fault_codes"],
            msg=f"{node}: {len(report['events'])} event(s), fault codes: {', '.join(report['fault_codes']) or 'none'}",
        )
        return result
