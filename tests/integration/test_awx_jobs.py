"""Each job template of awx/objects/ run once as AWX runs it (tests/integration/awx_jobs.py) against a simulated
site: the burn-in fixture fabric with a Lustre file system, every host on localhost with the fakes of tests/fakes, a
fresh copy of the run's synced NetBox reached through the NetBox credential. Check mode where another test runs the
playbook for real (docs/awx.md, "How the tests run jobs as AWX does", lists which and why)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from hwaac.devnetbox.instances import Instance
from hwaac.health.lifecycle import State
from hwaac.netbox.lifecycle import Evidence, TransitionRequest, apply_transitions
from hwaac.netbox.sync.client import Client
from hwaac.plan import build_plan
from hwaac.render import render_to_dir
from hwaac.validate import load_intent
from tests.fakes import gpu_node, nic_counters
from tests.fakes.simulate import simulate
from tests.integration.awx_controller import inject, job_templates, load_objects
from tests.integration.awx_jobs import (
    BIN,
    JobResult,
    assert_successful,
    build_job,
    files_holding,
    inventory_update,
    project,
    run_job,
    script_data,
)

if TYPE_CHECKING:
    from tests.integration.conftest import NetBoxPool

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("awx-site")]  # one site, one worker, in order

REPO = Path(__file__).resolve().parents[2]
BURN_IN = REPO / "tests/fixtures/intents/valid/burn-in.yml"  # the NetBox copy: NetBoxPool.synced of this intent
FABRIC = "awxsite"  # the fabric's folder in the project: inventory/awxsite
NODES = [f"gpu-su01-h0{n}" for n in range(1, 5)]
STORAGE = {
    "client_version": "2.15.5",
    "packages": "auto",
    "lnet": {"networks": [{"net": "o2ib0", "rails": list(range(8)), "routes": ["10.20.0.0/16"]}]},
    "filesystems": [{"name": "lfs1", "mgs": ["10.20.0.1@o2ib,10.20.1.1@o2ib"], "mount_point": "/mnt/lfs1"}],
}
IDENT = itertools.count(101)


@dataclass
class Site:
    root: Path
    project: Path
    render: Path
    sim: Path
    data: Path
    objects: dict[str, Any]
    inventory: dict[str, Any]
    netbox: Instance
    credential_env: dict[str, str]

    def run(
        self,
        template: str,
        answers: dict[str, Any] | None = None,
        *,
        job_type: str | None = None,
        limit: str | None = None,
    ) -> JobResult:
        """One job of ``template`` (a launch with ``answers``), run as AWX runs it; printed: what it took."""
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
            limit=limit,
        )
        result = run_job(job)
        print(
            f"AWX job {ident} {template}{' (check)' if job_type == 'check' else ''}: {result.status}, rc "
            f"{result.rc}, {result.seconds:.1f} s"
        )
        return result


def sim_variables(sim: Path, states: Path) -> dict[str, Any]:
    """The AWX inventory's variables for the simulated site: inventory/demo/simulated's group_vars (their paths into
    this site's folders; the fakes' states side by side in ``states``, where a GPU node's fakes find its peers'), the
    GPU node fakes' settings of the Molecule burn-in scenarios, no become."""
    base = yaml.safe_load((REPO / "inventory/demo/simulated/group_vars/all.yml").read_text())
    environment = {**base["hwaac_environment"], "HWAAC_FAKE_STATE": f"{states}/{{{{ inventory_hostname }}}}"}
    return {
        **base,
        "hwaac_repo": str(REPO),
        "hwaac_sim_host": f"{sim}/{{{{ inventory_hostname }}}}",
        "hwaac_environment": environment,
        "ansible_become": False,
        "burn_in_become": False,
        "health_check_become": False,
        "network_health_become": False,
        "verify_become": False,
        "burn_in_sysfs_root": "{{ hwaac_sim_host }}/state/sys",
        "health_check_sysfs_root": "{{ hwaac_sim_host }}/state/sys",
        "burn_in_timeout": 120,
        "health_check_timeout": 120,
        "network_health_tools": "{{ ['counters-db'] if network_health_kind == 'sonic' else ['ethtool'] }}",
        "network_probe_root": "{{ hwaac_sim_host }}/root",
        "network_probe_services": False,
        "network_probe_hwaac": str(BIN / "hwaac"),
    }


@pytest.fixture(scope="module")
def netbox(netbox_pool: NetBoxPool) -> Iterator[Instance]:
    """A fresh NetBox holding the burn-in fabric (a copy of the run's one sync), its nodes in burn-in."""
    with netbox_pool.synced("test_awx_jobs", BURN_IN) as inst:
        apply_transitions(
            Client(inst.url, inst.token),
            [TransitionRequest(n, State.BURN_IN, "burn-in starts") for n in NODES],
            mode="enforce",
            fabric="burnin",
        )
        yield inst


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, netbox: Instance) -> Site:
    return make_site(tmp_path_factory.mktemp("awx-site"), netbox)


def make_site(root: Path, netbox: Instance) -> Site:
    """The simulated site under ``root``: the project (with the fabric and its inventory source file), the render,
    the simulated hosts, the objects templated for this site, the inventory as AWX imports it."""
    data = root / "data"  # the folder AWX jobs keep their files in (hwaac_awx_data)
    intent = yaml.safe_load(BURN_IN.read_text())
    intent["storage"] = STORAGE
    src = project(root / "project")
    (src / "inventory" / FABRIC).mkdir()
    (src / "inventory" / FABRIC / "fabric.yml").write_text(yaml.safe_dump(intent, sort_keys=False))
    render = data / "render" / FABRIC  # the surveys' "Rendered files" default
    render_to_dir(build_plan(load_intent(src / "inventory" / FABRIC)), render)
    sim = root / "sim"
    simulate(render, sim)
    states = root / "state"  # the fakes' states side by side: a GPU node's fakes find its peers' there
    states.mkdir()
    for host in sorted(p.name for p in sim.iterdir()):
        (sim / host / "state").rename(states / host)
        (sim / host / "state").symlink_to(states / host)
    for node in NODES:  # the GPU node fakes of the Molecule burn-in scenarios, every node healthy
        state = states / node
        gpu_node.save(state)
        nic_counters.ensure_tree(state, gpu_node.load(state)["rails"])
        (state / "scontrol.json").write_text(json.dumps({"nodes": {node: {"state": "IDLE"}}}))
    source = f"awx/inventory/{FABRIC}.hwaac.yml"  # the site's inventory source file, in the project
    (src / source).write_text(
        yaml.safe_dump(
            {"plugin": "aiinfra.hwaac.fabric", "source": "plan", "plan_file": str(render), "render_dir": str(render)}
        )
    )
    objects = load_objects(
        hwaac_awx_fabric=FABRIC,
        hwaac_awx_data=str(data),
        hwaac_awx_inventory_file=source,
        hwaac_awx_netbox_url=netbox.url,
        hwaac_awx_netbox_token=netbox.token,
    )
    (ctype,) = objects["awx_credential_types"]
    (cred,) = objects["awx_credentials"]
    env, _ = inject(ctype, cred["inputs"])
    (inv_source,) = objects["awx_inventory_sources"]
    export = inventory_update(src, inv_source["source_path"], env, root / "inventory-update")
    inventory = script_data(export, sim_variables(sim, states))
    return Site(root, src, render, sim, data, objects, inventory, netbox, env)


def test_the_inventory_is_the_fabric_as_awx_imports_it(site: Site) -> None:
    inv = site.inventory
    assert sorted(inv["gpu_nodes"]["hosts"]) == NODES
    assert set(inv["all"]["children"]) >= {"fabric_burnin", "switches", "gpu_nodes", "su01", "spine", "leaf"}
    h01 = inv["_meta"]["hostvars"]["gpu-su01-h01"]
    # ansible-inventory --export marks the plugin's values unsafe ({"__ansible_unsafe": ...}); AWX stores the JSON as
    # it is and the job's script inventory hands it back to Ansible, which reads the mark
    assert h01["hwaac_files"] == {"__ansible_unsafe": str(site.render / "hosts" / "gpu-su01-h01")}
    assert h01["remote_tower_enabled"] == "true"
    assert inv["all"]["vars"]["ansible_connection"] == "local"


def test_validate(site: Site) -> None:
    r = site.run("hwaac validate")
    assert_successful(r, {"Validate the intent (hwaac validate)", "Report the intent's summary"})
    assert "ok: fabric burnin: 2 tiers" in r.stdout


def test_terraform_apply_in_check_mode_plans_the_stack(site: Site) -> None:
    r = site.run("hwaac terraform apply", job_type="check")
    assert_successful(
        r,
        {
            "Synthesize the fabric's cdktn stack (cdktf/main.py)",
            "Initialize the stack from the mirror (terraform init)",
        },
    )
    (plan,) = r.results("Plan the changes (terraform plan; check mode)")
    assert plan["rc"] == 2  # changes to make: the fabric is not in this stack's state yet
    assert (site.data / "terraform" / "cdktf.out" / "stacks" / "burnin" / "cdk.tf.json").is_file()
    assert not (site.data / "terraform" / "state" / "burnin.tfstate").exists()  # a plan writes no state


def test_site_in_check_mode(site: Site) -> None:
    # the survey's targets: a spine and a node (the roles' full runs: test_switch_config_rollout, molecule)
    r = site.run(
        "hwaac site",
        {
            "fabric_deploy_render": "plan",
            "fabric_deploy_hosts": "spine",
            "hosts_network_hosts": "gpu-su01-h01",
            "lustre_clients_hosts": "gpu-su01-h01",
        },
        job_type="check",
    )
    assert_successful(
        r,
        {
            "Render with hwaac (plan)",
            "Push the rendered config_db through the generic config updater",
            "Install the per-rail netplan file",
            "Mount the file systems and record them in fstab",
        },
    )
    assert set(r.stats()["ok"]) == {"localhost", "spine-p0-01", "gpu-su01-h01"}
    assert r.job.args[0] == "--check"
    assert not (site.sim / "gpu-su01-h01" / "root" / "etc" / "netplan" / "60-hwaac-rails.yaml").exists()


def test_hosts_network(site: Site) -> None:
    r = site.run("hwaac hosts network", {"hosts_network_hosts": "gpu-su01-h02"})
    assert_successful(
        r,
        {
            "Set the firmware parameters of every HCA (one invocation for all of them)",
            "Install the per-rail netplan file",
        },
    )
    assert (site.sim / "gpu-su01-h02" / "root" / "etc" / "netplan" / "60-hwaac-rails.yaml").read_text() == (
        site.render / "hosts" / "gpu-su01-h02" / "netplan" / "60-hwaac-rails.yaml"
    ).read_text()


def test_lustre_clients(site: Site) -> None:
    r = site.run("hwaac lustre clients", {"lustre_clients_hosts": "gpu-su01-h03"})
    assert_successful(r, {"Mount the file systems and record them in fstab"})
    assert "lfs1" in (site.sim / "gpu-su01-h03" / "root" / "etc" / "fstab").read_text()


def test_network_probe(site: Site) -> None:
    r = site.run("hwaac network probe", {"network_probe_hosts": "gpu-su01-h01"})
    assert_successful(r, {"Install the responder, the prober and its timer as systemd units"})


def test_network_health(site: Site) -> None:
    r = site.run(
        "hwaac network health", {"network_health_hosts": "spine-p0-01:gpu-su01-h01", "network_health_interval": 1}
    )
    assert_successful(r, {"Rates, SLIs and ranked suspects of the fabric"})
    report = json.loads((site.data / "reports" / "network" / "network-health.json").read_text())
    assert report["suspects"] == []


def test_burn_in_then_qualify_reads_its_reports(site: Site) -> None:
    # burn-in's survey default is a dry run: reports written, NetBox and Slurm not
    r = site.run("hwaac burn-in")
    assert_successful(r, {"The node's verdict and report"})
    reports = site.data / "reports" / "burn-in"
    assert sorted(p.name for p in reports.glob("gpu-*.burn-in.json")) == [f"{n}.burn-in.json" for n in NODES]
    q = site.run("hwaac qualify", {"qualify_sus": ["1"]})  # the workflow's next node, with the same SU
    assert_successful(q, {"Qualify each SU"})
    (su01,) = q.results("Qualify each SU")
    assert su01["stdout"].startswith("su01 of burnin: admitted (4 nodes)")
    client = Client(site.netbox.url, site.netbox.token)
    assert {
        d["name"]: d["custom_fields"]["hwaac_lifecycle"]
        for d in client.read("devices", "name,custom_fields", name=NODES)
    } == dict.fromkeys(NODES, "burn_in")  # dry runs moved nothing


def test_rail_check(site: Site) -> None:
    r = site.run("hwaac rail check", {"rail_check_hosts": "gpu-su01-h04"})
    assert_successful(r, {"Check that every device NCCL uses is present and Active"})
    (checked,) = r.results("Check that every device NCCL uses is present and Active")
    assert checked["msg"].startswith("8 rails Active: mlx5_0, ")


def test_health_check(site: Site) -> None:
    client = Client(site.netbox.url, site.netbox.token)
    apply_transitions(
        client, [TransitionRequest("gpu-su01-h01", State.PRODUCTION, "burn-in PASS")], mode="enforce", fabric="burnin"
    )
    r = site.run("hwaac health check", {"health_check_hosts": "gpu-su01-h01"})
    assert_successful(r, {"Read the nodes' lifecycle states from NetBox"})
    assert (site.data / "reports" / "health" / "gpu-su01-h01.health.json").is_file()


def test_rma(site: Site) -> None:
    client = Client(site.netbox.url, site.netbox.token)
    evidence = Evidence(verdict="FAIL", codes=["GPU_ROW_REMAP_PENDING"], action="reset_gpu")
    apply_transitions(
        client,
        [TransitionRequest("gpu-su01-h02", State.QUARANTINE, "burn-in FAIL", evidence)],
        mode="enforce",
        fabric="burnin",
    )
    r = site.run("hwaac rma", {"rma_hosts": "gpu-su01-h02", "rma_reason": "remap pending after GPU reset"})
    assert_successful(r, {"Move the nodes to rma in NetBox", "Write the RMA report"})
    (state,) = client.read("devices", "name,custom_fields", name=["gpu-su01-h02"])
    assert state["custom_fields"]["hwaac_lifecycle"] == "quarantine"  # the survey's default: a dry run


def test_the_token_check_catches_a_job_that_shows_the_token(site: Site) -> None:
    """The credential reaches the job's environment as NETBOX_URL and NETBOX_TOKEN only; a playbook that prints
    the token (here one of the test's own, not the collection's) is caught by the check every job above passed."""
    (site.project / "playbooks" / "zz_leak.yml").write_text(
        "- name: Leak\n  hosts: localhost\n  gather_facts: false\n  tasks:\n    - name: Show the token\n"
        "      ansible.builtin.debug:\n        msg: \"{{ lookup('ansible.builtin.env', 'NETBOX_TOKEN') }}\"\n"
    )
    try:
        jt = {**job_templates(site.objects)["hwaac validate"], "playbook": "playbooks/zz_leak.yml"}
        job = build_job(
            next(IDENT),
            jt,
            site.root / "jobs" / "leak",
            site.project,
            site.inventory,
            credential_env=site.credential_env,
        )
        envvars = json.loads((job.dir / "env" / "envvars").read_text())
        assert {k for k in envvars if k.startswith("NETBOX")} == {"NETBOX_URL", "NETBOX_TOKEN"}
        result = run_job(job)
    finally:
        (site.project / "playbooks" / "zz_leak.yml").unlink()
    assert (result.status, result.rc) == ("successful", 0)
    with pytest.raises(AssertionError):
        assert_successful(result, {"Show the token"})
    leaked = files_holding(job.dir / "artifacts", site.netbox.token)
    assert f"{job.ident}/command" in leaked and any("/job_events/" in p for p in leaked)
