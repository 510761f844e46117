# Test support, not shipped in the collection: records which tasks reported a change, so that a scenario can
# check that check mode predicted exactly the changes the real run then made.
from __future__ import annotations

DOCUMENTATION = r"""
name: hwaac_record_changes
type: aggregate
short_description: Record changed tasks per run (check mode or not) as JSON lines
description:
  - Appends one JSON line per task result that reports changed to the file named by E(HWAAC_RECORD_CHANGES)
    (nothing when it is unset) - keys run (check or apply), host, task (role and task name), item (loop item
    label or null), handler (true for handlers, which check mode skips). Molecule scenarios compare the check
    run's lines with the converge run's.
options: {}
"""

import json  # noqa: E402  (Ansible reads DOCUMENTATION first)
import os  # noqa: E402

from ansible import context  # noqa: E402
from ansible.playbook.handler import Handler  # noqa: E402
from ansible.plugins.callback import CallbackBase  # noqa: E402


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "hwaac_record_changes"
    CALLBACK_NEEDS_ENABLED = True

    def _record(self, result, item=None):
        path = os.environ.get("HWAAC_RECORD_CHANGES")
        if not path or not result._result.get("changed"):
            return
        task = result._task
        # handlers are commands (netplan apply, ...) that check mode skips: marked so a comparison can tell them apart
        line = {
            "run": "check" if context.CLIARGS.get("check") else "apply",
            "host": result._host.get_name(),
            "task": task.get_name(),
            "item": item,
            "handler": isinstance(task, Handler),
        }
        with open(path, "a") as out:
            out.write(json.dumps(line, sort_keys=True) + "\n")

    def v2_runner_on_ok(self, result):
        if not result._result.get("results"):  # loops: recorded per item below
            self._record(result)

    def v2_runner_item_on_ok(self, result):
        item = result._result.get("_ansible_item_label", result._result.get("item"))
        self._record(result, item=json.dumps(item, sort_keys=True, default=str))
