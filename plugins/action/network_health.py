# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Controller side of aiinfra.hwaac.network_health (documentation in plugins/modules/network_health.py): the
registered results of aiinfra.hwaac.network_telemetry become in-memory sweeps
(:func:`hwaac.telemetry.samples.sweeps_from_outputs`), judged by :func:`hwaac.telemetry.fabric_health.fabric_report`
as ``hwaac health fabric`` judges samples folders."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ansible.errors import AnsibleActionFail

from ansible_collections.aiinfra.hwaac.plugins.module_utils.telemetry_specs import SPECS
from ansible_collections.aiinfra.hwaac.plugins.module_utils.telemetry_tools import TOOLS
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_action import HwaacAction
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.hwaac_imports import HwaacImports
from ansible_collections.aiinfra.hwaac.plugins.plugin_utils.report_files import write_files

with HwaacImports() as HWAAC:  # this collection's Python core (same version), checked when the action runs
    from hwaac.errors import IntentError
    from hwaac.health.parsers.slurm_squeue import parse_squeue
    from hwaac.plan import build_plan
    from hwaac.telemetry.fabric_health import fabric_report
    from hwaac.telemetry.samples import Sweep, sweeps_from_outputs
    from hwaac.telemetry.slo import SloError, load_slos
    from hwaac.validate import load_intent

MODULE = "aiinfra.hwaac.network_health"
FAILS = {"fault": ("fault",), "warn": ("fault", "warn"), "never": ()}


def not_read(out: Mapping[str, Any], tool: str = "") -> str | None:
    """Why one tool's result cannot be read (None when it can): an incomplete read is never judged. A failed run
    adds the tool table's hint for ``tool`` (``probe``: the prober is not installed or has not run)."""
    if out.get("timed_out"):
        return f"timed out after {out.get('seconds')} s"
    if out.get("truncated"):
        return "output cut at the task's max_output"
    if out.get("rc") != 0:
        err = (str(out.get("stderr") or "").strip().splitlines() or [""])[0][:200]
        hint = TOOLS.get(tool.partition("@")[0], {}).get("hint")
        return f"exit {out.get('rc')}" + (f": {err}" if err else "") + (f" ({hint})" if hint else "")
    return None


def sweep_of(label: str, results: Mapping[str, Any], probe_max_age: float | None = None) -> Sweep:
    """One sweep from ``host -> network_telemetry result``; what cannot be read is listed as skipped."""
    return sweeps_from_outputs([outputs_of(label, results)], probe_max_age=probe_max_age)[0]


def outputs_of(
    label: str, results: Mapping[str, Any]
) -> tuple[str, dict[str, dict[str, tuple[str, float]]], None, list[str]]:
    """The readable outputs of ``host -> network_telemetry result`` as :func:`sweeps_from_outputs` takes them."""
    outputs: dict[str, dict[str, tuple[str, float]]] = {}
    skipped: list[str] = []
    for host in sorted(results):
        res = results[host]
        if not isinstance(res, Mapping) or not isinstance(res.get("outputs"), Mapping):
            why = (
                "skipped"
                if isinstance(res, Mapping) and res.get("skipped")
                else "unreachable or failed"
                if isinstance(res, Mapping)
                else "no result"
            )
            skipped.append(f"{label} {host}: no network_telemetry outputs ({why})")
            continue
        device = str(res.get("device") or host)
        for tool, out in res["outputs"].items():
            why = not_read(out, tool)
            if why:
                skipped.append(f"{label} {device} {tool}: not read, {why}")
                continue
            outputs.setdefault(device, {})[tool] = (str(out.get("stdout", "")), float(out["taken_at"]))
    return label, outputs, None, skipped


class ActionModule(HwaacAction, module=MODULE, hwaac=HWAAC, spec=SPECS["network_health"]):
    """Sweeps of registered telemetry -> the fabric report; the Markdown and JSON files in output_dir."""

    _requires_connection = False

    def gathered(self, args: dict[str, Any], task_vars: dict[str, Any]) -> list[Mapping[str, Any]]:
        """The sweeps, oldest first: ``sweeps`` as given, or each ``registered`` variable of every host."""
        if args["sweeps"] and args["registered"]:
            raise AnsibleActionFail(f"{MODULE}: give sweeps or registered, not both")
        if args["sweeps"]:
            return args["sweeps"]
        if not args["registered"]:
            raise AnsibleActionFail(
                f"{MODULE}: give sweeps (host -> network_telemetry result) or registered "
                "(the names of the registered results, oldest first)"
            )
        hostvars = task_vars.get("hostvars", {})
        hosts = args["hosts"] or task_vars.get("ansible_play_hosts_all") or list(hostvars)
        return [{h: hostvars[h].get(name) if h in hostvars else None for h in hosts} for name in args["registered"]]

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, task_vars, args = self.start(tmp, task_vars)
        name = args["name"]
        if not name or os.path.basename(name) != name or name.startswith("."):
            raise AnsibleActionFail(f"{MODULE}: name {name!r} must be a plain file name (written in output_dir)")
        gathered = self.gathered(args, task_vars)
        labels = args["registered"] or [f"sweep {i + 1}" for i in range(len(gathered))]
        if args["probe_max_age"] <= 0:
            raise AnsibleActionFail(f"{MODULE}: probe_max_age must be positive (seconds)")
        outputs = [outputs_of(label, results) for label, results in zip(labels, gathered, strict=True)]
        sweeps = sweeps_from_outputs(outputs, probe_max_age=args["probe_max_age"])
        try:
            slos = load_slos(args["slo"])
            plan = build_plan(load_intent(args["intent"]), validate=False)
            squeue = None
            if args["squeue"]:
                with open(args["squeue"], encoding="utf-8") as fh:
                    squeue = parse_squeue(fh.read())
        except SloError as exc:
            raise AnsibleActionFail(f"{MODULE}: slo: " + "; ".join(str(i) for i in exc.issues)) from None
        except (IntentError, OSError) as exc:
            raise AnsibleActionFail(f"{MODULE}: {str(exc).splitlines()[0]}") from None
        report = fabric_report(plan, sweeps, slos, squeue=squeue)
        if squeue is not None and squeue.unknown:
            report.coverage["squeue_lines_not_read"] = list(squeue.unknown)
        facts = report.to_dict()
        base = os.path.join(args["output_dir"], name)
        files = {base + ".md": report.markdown(), base + ".json": json.dumps(facts, indent=2) + "\n"}
        changed = write_files(files, self._task.check_mode)
        counts = ", ".join(f"{n} {sev}" for sev, n in facts["counts"].items() if n)
        first = "; ".join(
            f"{s['severity']} {s['kind']} {(s['components'] or [{'name': '?'}])[0]['name']} ({s['rule']})"
            for s in facts["suspects"][:5]
        )
        short = facts["coverage_below_slo"]
        cover = (
            (
                f"; coverage below its SLO in {len(short)} scope(s), {short[0]['scope']} {short[0]['key']}".rstrip()
                + f": {short[0]['unknown']} of {short[0]['planned']} planned links unknown"
            )
            if short
            else ""
        )
        result.update(
            changed=changed,
            status=report.status,
            exit_code=report.exit_code(),
            report=facts,
            files=sorted(files),
            msg=f"{report.status}: {len(report.suspects)} suspect(s)"
            + (f" ({counts})" if counts else "")
            + (f": {first}" if first else "")
            + cover,
        )
        if report.status in FAILS[args["fail_on"]]:
            result["failed"] = True
        return result
