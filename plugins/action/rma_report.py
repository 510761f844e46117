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
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.aiinfra.hwaac.plugins.module_utils.controller_specs import SPECS

try:  # the controller needs the hwaac package (this collection's Python core, same version)
    from hwaac.health.rma import rma_markdown, rma_report
    from hwaac.netbox.errors import NetBoxError
    from hwaac.netbox.lifecycle import LIFECYCLE_FIELD, device_journal

    HWAAC_IMPORT_ERROR = None
except ImportError as exc:  # reported when the action runs, so that ansible-doc works without it
    HWAAC_IMPORT_ERROR = exc

MODULE = "aiinfra.hwaac.rma_report"

ARGUMENT_SPEC = SPECS["rma_report"]


_STAMP = re.compile(r'^\s*("generated":|- Generated:)')  # the report's timestamp line (JSON and Markdown)


def _same(path: str, text: str) -> bool:
    """Whether the file holds ``text`` apart from the timestamp line."""
    try:
        with open(path, encoding="utf-8") as fh:
            old = fh.read()
    except FileNotFoundError:
        return False
    return ([line for line in old.splitlines() if not _STAMP.match(line)]
            == [line for line in text.splitlines() if not _STAMP.match(line)])


class ActionModule(ActionBase):
    """The RMA report of one node, from NetBox."""

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        if HWAAC_IMPORT_ERROR is not None:
            raise AnsibleActionFail(f"{MODULE} needs the hwaac Python package on the controller "
                                    f"(pip install hwaac, the version of this collection): {HWAAC_IMPORT_ERROR}")
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        checked = ArgumentSpecValidator(ARGUMENT_SPEC).validate(self._task.args)
        if checked.error_messages:
            raise AnsibleActionFail(f"{MODULE}: {'; '.join(checked.error_messages)}")
        args = checked.validated_parameters
        node = args["node"] or task_vars.get("inventory_hostname", "")
        from ansible_collections.aiinfra.hwaac.plugins.action.node_lifecycle import _client

        client = _client(args)
        try:
            recs = client.read("devices", "id,name,serial,site,status,device_type,custom_fields", name=node)
            if not recs:
                raise AnsibleActionFail(f"{MODULE}: {node}: no such device in NetBox")
            r = recs[0]
            device = {"name": r["name"], "serial": r.get("serial") or "",
                      "site": (r.get("site") or {}).get("name", ""), "status": (r.get("status") or {}).get("value", ""),
                      "device_type": (r.get("device_type") or {}).get("model", ""),
                      "lifecycle": (r.get("custom_fields") or {}).get(LIFECYCLE_FIELD) or ""}
            generated = datetime.now(UTC).isoformat(timespec="seconds")
            report = rma_report(device, device_journal(client, node), generated=generated)
        except NetBoxError as exc:
            raise AnsibleActionFail(f"{MODULE}: {exc}") from None
        files = {os.path.join(args["dest"], f"{node}.rma.json"): json.dumps(report, indent=2, sort_keys=True) + "\n",
                 os.path.join(args["dest"], f"{node}.rma.md"): rma_markdown(report)}
        changed = False
        for path, text in files.items():
            if _same(path, text):
                continue
            changed = True
            if not self._task.check_mode:
                os.makedirs(args["dest"], exist_ok=True)
                with open(path + ".tmp", "w", encoding="utf-8") as fh:
                    fh.write(text)
                os.replace(path + ".tmp", path)
        result.update(changed=changed, files=sorted(files), fault_codes=report["fault_codes"],
                      msg=f"{node}: {len(report['events'])} event(s), fault codes: "
                          f"{', '.join(report['fault_codes']) or 'none'}")
        return result
