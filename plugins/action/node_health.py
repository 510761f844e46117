# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Controller side of aiinfra.hwaac.node_health (documentation in plugins/modules/node_health.py).

Flow: load the SKU profile -> the stage's probe commands (:func:`hwaac.health.node.commands`) -> the host module
runs them with time limits -> :func:`hwaac.health.node.evaluate` parses and checks every output -> the verdict.
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
    from hwaac.errors import IntentError
    from hwaac.health.node import Context, commands, evaluate, hardware_ids, verdict
    from hwaac.health.profile import load_profile

MODULE = "aiinfra.hwaac.node_health"
# perftest's client messages when no server listens yet (perftest_communication.c)
CONNECT_REFUSED = r"Couldn't connect to|Unable to init the socket connection"
DEFAULT_TIMEOUT = {
    "quick": 120,
    "single_node": 1800,
    "ib_serve": 300,
    "ib_pairwise": 300,
    "nccl_multi": 1800,
    "health": 300,
}


def rails_from_files(files: str | None) -> list[str] | None:
    """The node's rail RDMA devices in rail order from its rendered ``nic-roce.json`` (``hwaac_files``)."""
    if not files:
        return None
    path = os.path.join(files, "nic-roce.json")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as fh:
        ports = json.load(fh).get("ports", [])
    return [p["hca"] for p in sorted(ports, key=lambda p: p.get("rail", 0)) if p.get("hca")]


class ActionModule(HwaacAction, module=MODULE, hwaac=HWAAC):
    """Run a stage's probes on the node, judge them on the controller."""

    _requires_connection = True
    _supports_async = True  # ib_serve runs its servers in the background (async, poll 0) while clients connect

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, task_vars, args = self.start(tmp, task_vars)
        try:
            profile = load_profile(args["profile"])
        except IntentError as exc:
            raise AnsibleActionFail(f"{MODULE}: profile: {exc}") from None
        stage = args["stage"]
        rails = args["rails"] or rails_from_files(self._templar.template(task_vars.get("hwaac_files")))
        try:
            argvs = commands(
                stage,
                profile,
                sysfs_root=args["sysfs_root"],
                rails=rails,
                peer=args["peer"],
                mpi_hosts=args["mpi_hosts"],
                nccl_algo=args["nccl_algo"],
            )
        except KeyError as exc:
            raise AnsibleActionFail(f"{MODULE}: stage {stage}: {exc.args[0]}") from None
        timeout = args["timeout"] or (profile.dcgm.timeout_seconds if stage == "dcgm" else DEFAULT_TIMEOUT[stage])
        probes: dict[str, dict[str, Any]] = {name: {"argv": argv, "timeout": timeout} for name, argv in argvs.items()}
        for name, probe in probes.items():
            if name.startswith("ib_serve_"):
                probe["parallel"] = True  # every rail's server listens at once
            elif name.startswith("ib_write_bw_"):
                # the peer's servers start in the background just before: a refused connect is tried again
                probe.update(retries=20, retry_delay=1, retry_on=CONNECT_REFUSED)
        module_args = {k: v for k, v in args.items() if v is not None}
        wrap_async = bool(self._task.async_val) and not self._connection.has_native_async
        if wrap_async and stage != "ib_serve":
            raise AnsibleActionFail(f"{MODULE}: only stage ib_serve runs async (the others are judged when they end)")
        ran = self._execute_module(
            module_name=MODULE,
            module_args={**module_args, "probes": probes},
            task_vars=task_vars,
            wrap_async=wrap_async,
        )
        if wrap_async or ran.get("failed"):
            return {**result, **ran}
        outputs = ran.get("outputs", {})
        node = task_vars.get("inventory_hostname", "")
        ctx = Context(
            node=node,
            rails=tuple(rails) if rails else None,
            under_load=args["under_load"],
            nccl_algo=args["nccl_algo"] if stage == "nccl_multi" else None,
            nodes=len(args["mpi_hosts"]) if args["mpi_hosts"] else None,
            counters_before=args["counters_before"],
            counters_seconds=args["counters_age"],
            rdma_statistic_before=args["rdma_statistic_before"],
        )
        v = verdict(node, {stage: evaluate(outputs, profile, ctx)})
        summary = v.to_dict()
        counters = outputs.get("ib_counters", {}).get("stdout")
        rdma_statistic = outputs.get("rdma_statistic", {}).get("stdout")
        result.update(
            changed=False,
            stage=stage,
            **verdict_fields(summary),
            outputs=outputs,
            rails=rails or [],
            profile=profile.sku,
            hardware=hardware_ids(outputs, ctx.parsed),
            msg=verdict_msg(stage, summary),
        )
        if counters is not None:
            result["counters"] = counters
        if rdma_statistic is not None:  # the next stage's rdma_statistic_before, as counters is its counters_before
            result["rdma_statistic"] = rdma_statistic
        return result
