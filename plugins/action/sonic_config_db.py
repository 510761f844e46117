# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Controller side of aiinfra.hwaac.sonic_config_db (documentation in plugins/modules/sonic_config_db.py).

Flow: the host module reads the running CONFIG_DB -> :func:`hwaac.apply.config_patch` computes the patch (and
refuses MGMT_*/Loopback0 changes) -> check mode stops here with the would-be tables and per-table diffs -> the
module checkpoints and applies the patch (rolling back itself when ``config apply-patch`` fails) -> the running
config is re-read and must need no further patch, else the module rolls back -> the module saves and deletes the
checkpoint (with ``keep_checkpoint``: neither; the push stays pending until ``state: committed`` saves and deletes
the checkpoint or ``state: rolled_back`` rolls back to it).
"""

from __future__ import annotations

import json
from typing import Any

from ansible.errors import AnsibleActionFail

from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_action import HwaacAction
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_imports import HwaacImports

with HwaacImports() as HWAAC:  # this collection's Python core (same version), checked when the action runs
    from hwaac.apply import (
        OWNED_TABLES,
        UnsafePatchError,
        bgp_neighbors,
        config_patch,
        table_diffs,
        tables_changed,
        target_config,
    )
    from hwaac.mitigation.drain import keep_drains

MODULE = "aiinfra.hwaac.sonic_config_db"

ARGUMENT_SPEC: dict[str, dict[str, Any]] = {
    "config": {"type": "dict"},
    "src": {"type": "path"},
    "tables": {"type": "list", "elements": "str"},
    "owned_tables": {"type": "list", "elements": "str"},
    "checkpoint_name": {"type": "str", "default": "hwaac-pre-push"},
    "save": {"type": "bool", "default": True},
    "state": {"type": "str", "choices": ["present", "committed", "rolled_back"], "default": "present"},
    "keep_checkpoint": {"type": "bool", "default": False},
    "keep_drains": {"type": "bool", "default": True},
}


def _table_slice(config: dict[str, Any], tables: list[str]) -> dict[str, Any]:
    return {t: config[t] for t in tables if t in config}


class ActionModule(HwaacAction, module=MODULE, hwaac=HWAAC, spec=ARGUMENT_SPEC):
    """Compute the patch on the controller, run the tools through the host module."""

    _requires_connection = True

    def _desired(self, args: dict[str, Any]) -> dict[str, Any]:
        if args["config"] is not None:
            return args["config"]
        path = self._find_needle("files", args["src"])
        try:
            with open(path, encoding="utf-8") as fh:
                desired = json.load(fh)
        except (OSError, ValueError) as exc:
            raise AnsibleActionFail(f"{MODULE}: cannot read src {path}: {exc}") from exc
        if not isinstance(desired, dict):
            raise AnsibleActionFail(f"{MODULE}: src {path} is not a config_db object")
        return desired

    def _step(self, operation: str, task_vars: dict[str, Any], **extra: Any) -> dict[str, Any]:
        args = {
            "operation": operation,
            "checkpoint_name": self._args["checkpoint_name"],
            "save": self._args["save"],
            **extra,
        }
        return self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars)

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, task_vars, self._args = self.start(
            tmp,
            task_vars,
            mutually_exclusive=[["config", "src"]],
            required_if=[["state", "present", ["config", "src"], True]],
        )
        if self._args["state"] != "present":
            return self._settle(result, task_vars)
        desired = self._desired(self._args)
        owned = self._args["owned_tables"]
        owned_set = frozenset(owned) if owned is not None else OWNED_TABLES
        commands: list[dict[str, Any]] = []
        result.update(
            checkpoint=self._args["checkpoint_name"],
            rolled_back=False,
            commands=commands,
            bgp_neighbors=bgp_neighbors(desired),
            checkpoint_kept=False,
        )

        read = self._step("read", task_vars)
        commands.extend(read.get("commands", []))
        if read.get("failed"):
            return {**result, "failed": True, "msg": read.get("msg", "reading the running config failed")}
        running = read["running"]
        if self._args["keep_drains"]:
            desired = keep_drains(running, desired)
        try:
            patch = config_patch(running, desired, tables=self._args["tables"], owned=owned_set)
        except (UnsafePatchError, ValueError) as exc:
            return {**result, "failed": True, "msg": str(exc), "changed": False}

        changed_tables = list(tables_changed(patch))
        target = target_config(running, desired, tables=self._args["tables"], owned=owned_set)
        result.update(
            changed=bool(patch),
            patch=patch,
            tables_changed=tables_changed(patch),
            after=_table_slice(target, changed_tables),
        )
        if self._task.diff and patch:
            result["diff"] = table_diffs(running, target, changed_tables)
        if not patch or self._task.check_mode:
            return result

        applied = self._step("apply", task_vars, patch=patch)
        commands.extend(applied.get("commands", []))
        if applied.get("failed"):
            return {
                **result,
                "failed": True,
                "msg": applied.get("msg"),
                "rolled_back": bool(applied.get("rolled_back")),
            }

        # GCU verifies its own target; this checks hwaac's: the running config must need no further patch
        remaining = config_patch(applied["running"], desired, tables=self._args["tables"], owned=owned_set, check=False)
        if remaining:
            undone = self._step("rollback", task_vars)
            commands.extend(undone.get("commands", []))
            shown = ", ".join(f"{op['op']} {op['path']}" for op in remaining[:5])
            return {
                **result,
                "failed": True,
                "rolled_back": bool(undone.get("rolled_back")),
                "msg": f"after config apply-patch the running config still differs from the desired one "
                f"({len(remaining)} operation(s): {shown}); "
                + ("rolled back" if undone.get("rolled_back") else f"rollback failed: {undone.get('msg')}"),
            }

        result["after"] = _table_slice(applied["running"], changed_tables)
        if self._args["keep_checkpoint"]:
            result["checkpoint_kept"] = True
            return result
        finished = self._step("finish", task_vars)
        commands.extend(finished.get("commands", []))
        if finished.get("failed"):
            return {**result, "failed": True, "msg": finished.get("msg")}
        return result

    def _settle(self, result: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        """``state: committed`` / ``rolled_back``: confirm or undo the push pending on the checkpoint, if any."""
        op = "commit" if self._args["state"] == "committed" else "revert"
        done = self._step(op, task_vars)
        result.update(
            checkpoint=self._args["checkpoint_name"],
            commands=done.get("commands", []),
            changed=bool(done.get("changed")),
            rolled_back=bool(done.get("rolled_back")),
            checkpoint_kept=False,
        )
        if done.get("failed"):
            return {**result, "failed": True, "msg": done.get("msg")}
        if not done.get("changed"):
            result["msg"] = f"no pending push (no checkpoint {self._args['checkpoint_name']}): nothing to do"
        elif op == "revert":
            result["msg"] = f"rolled back to checkpoint {self._args['checkpoint_name']}"
        return result
