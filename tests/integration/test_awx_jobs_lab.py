"""The job templates that act on a running fabric, each run once as AWX runs it (tests/integration/awx_jobs.py)
against the shared demo twin: verify, fabric deploy (check), mitigate (stages that change nothing), maintenance
(check), remediate (a dry run, a real Alertmanager holding one alert). None may change the twin (docs/awx.md)."""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from hwaac.inventory import from_plan_file
from hwaac.lab import Lab
from hwaac.lab.factory import prepare
from hwaac.lab.sonic_cli import Switch
from tests.integration.awx_controller import inject, job_templates, load_objects
from tests.integration.awx_jobs import (
    JobResult,
    assert_successful,
    build_job,
    inventory_update,
    project,
    run_job,
    script_data,
)

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("lab")]

REPO = Path(__file__).resolve().parents[2]
LEAF, SPINE = "leaf-p0-su01-r0", "spine-p0-01"
TOKEN = "twin-0123456789abcdef"  # the NetBox credential of remediate (the dry run does not record in NetBox)
IDENT = itertools.count(201)


@dataclass
class TwinSite:
    lab: Lab
    root: Path
    project: Path
    render: Path
    objects: dict[str, Any]
    inventory: dict[str, Any]
    credential_env: dict[str, str]

    def run(self, template: str, answers: dict[str, Any] | None = None, *, job_type: str | None = None) -> JobResult:
        jt = job_templates(self.objects)[template]
        ident = next(IDENT)
        job = build_job(
            ident,
            jt,
            self.root / "jobs" / str(ident),
            self.project,
            self.inventory,
            answers=answers,
            credential_env=self.credential_env if jt["credentials"] else {},
            job_type=job_type,
        )
        result = run_job(job)
        print(
            f"AWX job {ident} {template}{' (check)' if job_type == 'check' else ''} on the twin: {result.status}, "
            f"rc {result.rc}, {result.seconds:.1f} s"
        )
        return result


def twin_inventory(lab: Lab, render: Path) -> dict[str, Any]:
    """The twin as a YAML inventory: the fabric's groups (aiinfra.hwaac.fabric's, from the plan), every device run
    from here in its namespace with its own tools first on PATH."""
    fab = from_plan_file(render, render_dir=render)
    hosts = {}
    for name, hostvars in fab.hostvars.items():
        path = lab.env(name)["PATH"]
        hosts[name] = {
            **hostvars,
            "hwaac_netns": lab.netns(name),
            "hwaac_environment": {"PATH": path},
            "fabric_deploy_environment": {
                k: v for k, v in lab.env(name).items() if k == "PATH" or k.startswith("HWAAC_")
            },
        }
    children = {g: {"hosts": dict.fromkeys(members)} for g, members in fab.groups.items()}
    for parent, kids in fab.children.items():
        children.setdefault(parent, {})["children"] = dict.fromkeys(kids)
    return {
        "all": {
            "hosts": hosts,
            "children": children,
            "vars": {
                "ansible_connection": "local",
                "ansible_python_interpreter": sys.executable,
                "fabric_deploy_become": False,
                "verify_become": False,
                "switch_config_bgp_retries": 2,
                "switch_config_bgp_delay": 1,
            },
        }
    }


@pytest.fixture(scope="module")
def twin(demo_twin: Lab, tmp_path_factory: pytest.TempPathFactory) -> TwinSite:
    lab = demo_twin
    prepare(lab)  # the switches' SONiC tools (hwaac lab deploy does it too; a second call changes nothing)
    root = tmp_path_factory.mktemp("awx-twin")
    render = Path(lab.render_dir)
    src = project(root / "project")
    source = "awx/inventory/twin.yml"
    (src / source).write_text(yaml.safe_dump(twin_inventory(lab, render)))
    objects = load_objects(
        hwaac_awx_fabric="demo",
        hwaac_awx_data=str(root / "data"),
        hwaac_awx_inventory_file=source,
        hwaac_awx_netbox_url="http://127.0.0.1:9",
        hwaac_awx_netbox_token=TOKEN,
    )
    env, _ = inject(objects["awx_credential_types"][0], objects["awx_credentials"][0]["inputs"])
    export = inventory_update(src, objects["awx_inventory_sources"][0]["source_path"], {}, root / "inventory-update")
    return TwinSite(lab, root, src, render, objects, script_data(export), env)


def running(lab: Lab, device: str) -> dict[str, Any]:
    return Switch.of_lab(lab.folder, device).state.running()


def test_verify(twin: TwinSite) -> None:
    r = twin.run(
        "hwaac verify", {"verify_hosts": f"{LEAF},{SPINE},gpu-su01-h01,gpu-su02-h01", "verify_plan": str(twin.render)}
    )
    assert_successful(
        r, {"Read FRR, lldpd, links and the rail probes", "Judge the facts against the plan and write the reports"}
    )
    doc = json.loads((twin.root / "data" / "reports" / "verify" / "verify.json").read_text())
    assert doc["passed"] is True and sorted(doc["devices"]) == sorted([LEAF, SPINE, "gpu-su01-h01", "gpu-su02-h01"])


def test_fabric_deploy_in_check_mode(twin: TwinSite) -> None:
    before = running(twin.lab, LEAF)
    r = twin.run(
        "hwaac fabric deploy",
        {"fabric_deploy_hosts": LEAF, "fabric_deploy_render": "none", "switch_config_dir": str(twin.render)},
        job_type="check",
    )
    assert_successful(r, {"Push the rendered config_db through the generic config updater"})
    (push,) = r.results("Push the rendered config_db through the generic config updater")
    assert push["changed"] is False  # the twin runs its render: nothing to push
    assert running(twin.lab, LEAF) == before


def test_mitigate_with_stages_that_change_nothing(twin: TwinSite) -> None:
    before = running(twin.lab, LEAF)
    same = {"PORT": {"Ethernet0": {"description": before["PORT"]["Ethernet0"].get("description", "")}}}
    r = twin.run(
        "hwaac mitigate",
        {
            "mitigate_hosts": LEAF,
            "mitigate_pause_s": 0,
            "mitigate_stage1": {LEAF: same},
            "mitigate_stage2": {LEAF: same},
        },
    )
    assert_successful(
        r, {"Merge stage 1 through the generic config updater", "Merge stage 2 through the generic config updater"}
    )
    assert r.stats().get("changed", {}) == {}
    assert running(twin.lab, LEAF) == before


def test_maintenance_in_check_mode(twin: TwinSite) -> None:
    before = running(twin.lab, SPINE)
    state = twin.root / "maintenance-state"
    r = twin.run(
        "hwaac maintenance",
        {
            "maintenance_switch": SPINE,
            "maintenance_reason": "AWX check, CHG-7",
            "maintenance_render_dir": str(twin.render),
            "remediate_state": str(state),
        },
        job_type="check",
    )
    assert_successful(
        r,
        {
            "Drain the switch (hwaac remediate, behind the guard rails)",
            "Apply the change, checkpoint kept, the switch still drained (the rollout's push)",
            "Undrain the switch (hwaac remediate)",
        },
    )
    assert running(twin.lab, SPINE) == before and not state.exists()  # check mode changed nothing


@pytest.fixture(scope="module")
def alertmanager(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Alertmanager with hwaac's route (files/alertmanager/hwaac-remediate.yml), on a free port."""
    work = tmp_path_factory.mktemp("alertmanager")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    route = REPO / "files" / "alertmanager" / "hwaac-remediate.yml"
    proc = subprocess.Popen(
        [
            "prometheus-alertmanager",
            f"--config.file={route}",
            f"--storage.path={work}",
            "--cluster.listen-address=",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError):
                if urllib.request.urlopen(f"{url}/-/ready", timeout=2).status == 200:
                    break
            assert proc.poll() is None and time.monotonic() < deadline, "alertmanager did not start"
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_remediate_dry_run(twin: TwinSite, alertmanager: str) -> None:
    plan = json.loads((twin.render / "plan.json").read_text())
    cable = next(cid for cid, link in sorted(plan["links"].items()) if link["kind"] == "leaf_spine")
    alert = [
        {
            "labels": {
                "alertname": "HwaacMitigate",
                "fabric": "demo",
                "rule": "probe_path_loss",
                "severity": "fault",
                "kind": "cable",
                "component": cable,
                "cable": cable,
            }
        }
    ]
    req = urllib.request.Request(
        f"{alertmanager}/api/v2/alerts",
        data=json.dumps(alert).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    assert urllib.request.urlopen(req, timeout=10).status == 200
    state = twin.root / "remediate-state"
    r = twin.run("hwaac remediate", {"remediate_alertmanager": alertmanager, "remediate_state": str(state)})
    assert_successful(r, {"Decide and carry out the sweep", "Report each decision"})
    (sweep,) = r.results("Decide and carry out the sweep")
    assert "--dry-run" in sweep["cmd"] and "--apply" not in sweep["cmd"]  # the survey's default
    decisions = json.loads(sweep["stdout"])["decisions"]
    assert [(d["action"], d["target"]) for d in decisions] == [("drain_link", cable)]
