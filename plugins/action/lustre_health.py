# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Controller side of aiinfra.hwaac.lustre_health (documentation in plugins/modules/lustre_health.py).

Flow: the expected file systems (task option, else the host's rendered ``lustre-client.json``) -> the probe
commands (:func:`hwaac.health.lustre.commands`) -> the host module runs them with time limits and reads the mount
table -> :func:`hwaac.health.lustre.evaluate` parses and judges -> the verdict (:func:`client_verdict`).
"""

from __future__ import annotations

import json
import os
from typing import Any

from ansible.errors import AnsibleActionFail

from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_action import HwaacAction
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_imports import HwaacImports
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.verdict import verdict_fields, verdict_msg

with HwaacImports() as HWAAC:  # this collection's Python core (same version), checked when the action runs
    from hwaac.health.lustre import all_mgs_nids, client_verdict, commands, evaluate, expected_filesystems
    from hwaac.health.parsers.lustre_mounts import parse_lustre_mounts

MODULE = "aiinfra.hwaac.lustre_health"
CLIENT_CONFIG = "lustre-client.json"


def filesystems_from_config(path: str) -> list[Any]:
    """``filesystems`` of a rendered ``lustre-client.json`` (docs/render-host.md).

    Raises:
        AnsibleActionFail: the file cannot be read, is not JSON, or has no ``filesystems`` list.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise AnsibleActionFail(f"{MODULE}: client_config {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise AnsibleActionFail(f"{MODULE}: client_config {path}: not JSON: {exc}") from None
    items = data.get("filesystems") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise AnsibleActionFail(f"{MODULE}: client_config {path}: no 'filesystems' list")
    return items


class ActionModule(HwaacAction, module=MODULE, hwaac=HWAAC):
    """Run the Lustre probes on the node, judge them on the controller."""

    _requires_connection = True

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        """Expected file systems -> probes -> the host module -> :func:`evaluate` -> the verdict.

        Returns:
            The task result: ``status``, ``codes``, ``action``, ``findings`` (dicts), ``outputs`` (raw, per
            probe), ``proc_mounts``, ``filesystems`` (names judged), ``mounted`` (Lustre fsnames in the mount
            table), ``msg``; ``failed`` when the module failed or, with ``fail_on_fail``, the verdict is FAIL.

        Raises:
            AnsibleActionFail: no expected file systems given or found, an unreadable ``client_config``, or a
                malformed expectation (the message names the field and what is valid).
        """
        result, task_vars, args = self.start(tmp, task_vars)
        items = args["filesystems"]
        if items is None:
            path = args["client_config"]
            if path is None:
                files = task_vars.get("hwaac_files")
                if files:
                    path = os.path.join(str(self._templar.template(files)), CLIENT_CONFIG)
            if path is None:
                raise AnsibleActionFail(
                    f"{MODULE}: give filesystems, client_config, or the host's hwaac_files holding its {CLIENT_CONFIG}"
                )
            items = filesystems_from_config(path)
        try:
            filesystems = expected_filesystems(items)
            nids = all_mgs_nids(filesystems, args["mgs_nids"] or [])
        except ValueError as exc:
            raise AnsibleActionFail(f"{MODULE}: {exc}") from None
        argvs = commands(nids, lnet=args["lnet"], nids=args["list_nids"], df=args["lfs_df"])
        probes = {name: {"argv": argv, "timeout": args["timeout"]} for name, argv in argvs.items()}
        module_args = {k: v for k, v in args.items() if v is not None and k != "filesystems"}
        ran = self._execute_module(
            module_name=MODULE, module_args={**module_args, "probes": probes}, task_vars=task_vars
        )
        if ran.get("failed"):
            return {**result, **ran}
        outputs = ran.get("outputs", {})
        mounts = ran.get("proc_mounts")
        findings = evaluate(outputs, filesystems, proc_mounts=mounts, mgs_nids=args["mgs_nids"] or [])
        node = task_vars.get("inventory_hostname", "")
        summary = client_verdict(node, findings).to_dict()
        result.update(
            changed=False,
            **verdict_fields(summary),
            outputs=outputs,
            proc_mounts=mounts,
            filesystems=[fs.name for fs in filesystems],
            mounted=sorted({m.fsname for m in parse_lustre_mounts(mounts or "")}),
            msg=verdict_msg("lustre", summary),
        )
        if ran.get("proc_mounts_error"):
            result["proc_mounts_error"] = ran["proc_mounts_error"]
        if args["fail_on_fail"] and summary["status"] == "FAIL":
            result["failed"] = True
        return result
