# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Controller side of aiinfra.hwaac.network_telemetry (documentation in plugins/modules/network_telemetry.py): with
``render_dir`` on a GPU node (``kind: host``), the per-port tools run for the ports of the node's rendered
``hosts/<node>/nic-roce.json`` (:func:`hwaac.telemetry.host_ports.node_tools`), read on the controller; then the
host module runs the tools. Without ``render_dir`` the arguments go to the host module as they are."""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleActionFail

from ansible_collections.aiinfra.hwaac.plugins.module_utils.telemetry_specs import SPECS
from ansible_collections.aiinfra.hwaac.plugins.module_utils.telemetry_tools import DEFAULT_TOOLS
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_action import HwaacAction

MODULE = "aiinfra.hwaac.network_telemetry"


class ActionModule(HwaacAction, module=MODULE, spec=SPECS["network_telemetry"]):
    """Resolve a GPU node's ports from its rendered files, then run the host module (the hwaac package is needed
    only with render_dir, imported there)."""

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, task_vars, args = self.start(tmp, task_vars)
        render_dir = args.pop("render_dir")
        module_args = {k: v for k, v in args.items() if v is not None}
        if render_dir and args["kind"] == "host":
            if args["ports"]:
                raise AnsibleActionFail(
                    f"{MODULE}: give ports or render_dir, not both (render_dir names each "
                    "node's ports from its nic-roce.json)"
                )
            try:
                from hwaac.telemetry.host_ports import HostPortsError, node_tools
            except ImportError as exc:
                raise AnsibleActionFail(
                    f"{MODULE}: render_dir needs the hwaac Python package on the controller "
                    f"(pip install hwaac, the version of this collection): {exc}"
                ) from None
            node = args["device"] or task_vars.get("inventory_hostname", "")
            tools = args["tools"] if args["tools"] is not None else DEFAULT_TOOLS["host"]
            try:
                module_args["tools"] = node_tools(render_dir, node, tools)
            except HostPortsError as exc:
                raise AnsibleActionFail(f"{MODULE}: {exc}") from None
        ran = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
        return {**result, **ran}
