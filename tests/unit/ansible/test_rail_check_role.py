"""Role aiinfra.hwaac.rail_check run for real with ansible-playbook on localhost, one run for several GPU nodes of
the demo plan (rendered by hwaac): the filter nccl_rail_check takes the ports the node's NCCL_IB_HCA selects (by
NCCL's matching), judges them with hwaac's ibstat check (Active and LinkUp), and names each rail NCCL would use
that is missing or not up, with its address and leaf port.

- gpu-su01-h01: ``ibstat`` prints the recorded RoCE output tests/fixtures/health/ibstat/rdma-core-47/
  h100-roce-400g-down-polling.txt (mlx5_5 Down/Disabled and mlx5_11 Down/Polling; mlx5_11 is not one of NCCL's);
- gpu-su01-h02: the fake ibstat (tests/fakes/bin, the same recorded layout), every rail up;
- gpu-su01-h03: the fake with 6 devices (mlx5_6 and mlx5_7 absent);
- gpu-su01-h04: the recorded output with mlx5_0 made a dual-port HCA whose port 2 is Down (ibstat prints one
  ``Port N:`` block per port, infiniband-diags ``src/ibstat.c``): NCCL uses mlx5_0:1, so only rail5 is named;
- gpu-su01-h05: every rail up, NCCL_IB_HCA overridden (an intent's ``host.nccl_env``) by an exclude list of a
  device the node does not have, ``^mlx5_8``: NCCL takes the eight rails;
- gpu-su01-h06: the recorded output with the prefix form ``mlx5``: NCCL takes all twelve devices, so the Down
  mlx5_11 counts too, named as a port that is no rail of the plan;
- gpu-su01-h07: rail7 dead and left out by ``^=mlx5_7``: NCCL does not use it, so it is not judged, and said so;
- gpu-su01-h08: the recorded output with mlx5_2 Active but not LinkUp (LinkErrorRecovery): not a working link;
- gpu-su01-h09: the recorded output cut where ibstat stopped at mlx5_6 (``ibpanic`` on stderr, exit 255, as
  tests/fixtures/health/ibstat/rdma-core-39/a100-ibpanic.txt): rail5 Down as recorded, rail6 and rail7 not read."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from hwaac.plan import build_plan
from hwaac.render import render_to_dir
from hwaac.validate import load_intent

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
RECORDED = REPO / "tests/fixtures/health/ibstat/rdma-core-47/h100-roce-400g-down-polling.txt"
FAKES = REPO / "tests/fakes/bin"
PANIC = "ibpanic: [1400444] main: stat of IB device 'mlx5_6' failed: No such file or directory"  # rdma-core-39's

# host -> (how its ibstat is made and its NCCL_IB_HCA, whether the node fails, what the last task says)
CASES: dict[str, tuple[dict[str, Any], bool, str]] = {
    "gpu-su01-h01": (
        {"recorded": RECORDED},
        True,
        "1 of 8 rails not usable: rail5 (mlx5_5, Down/Disabled, 172.16.1.65/31) -> leaf-p0-su01-r5 Ethernet0",
    ),
    "gpu-su01-h02": (
        {"fake": {}},
        False,
        "8 rails Active: mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7",
    ),
    "gpu-su01-h04": (
        {"recorded": RECORDED, "dual_port": "mlx5_0"},
        True,  # slot 4: .70/31, the 4th leaf port
        "1 of 8 rails not usable: rail5 (mlx5_5, Down/Disabled, 172.16.1.71/31) -> leaf-p0-su01-r5 Ethernet12",
    ),
    "gpu-su01-h03": (
        {"fake": {"rails": 6}},
        True,
        "2 of 8 rails not usable: rail6 (mlx5_6, missing, 172.16.1.133/31) -> leaf-p0-su01-r6 "
        "Ethernet8; rail7 (mlx5_7, missing, 172.16.1.197/31) -> leaf-p0-su01-r7 Ethernet8",
    ),
    "gpu-su01-h05": (
        {"fake": {}, "hca": "^mlx5_8"},
        False,
        "8 rails Active: mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7",
    ),
    "gpu-su01-h06": (
        {"recorded": RECORDED, "hca": "mlx5"},
        True,
        "1 of 8 rails and 1 other port not usable: rail5 (mlx5_5, Down/Disabled, 172.16.1.75/31) -> "
        "leaf-p0-su01-r5 Ethernet20; mlx5_11 port 1 (Down/Polling, not a rail of the plan); NCCL also "
        "takes mlx5_10 port 1, mlx5_8 port 1, mlx5_9 port 1 (not a rail of the plan)",
    ),
    "gpu-su01-h07": (
        {"fake": {"dead_rails": [7]}, "hca": "^=mlx5_7"},
        False,
        "7 rails Active: mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6; NCCL_IB_HCA=^=mlx5_7 "
        "leaves out rail7 (mlx5_7)",
    ),
    "gpu-su01-h08": (
        {"recorded": RECORDED, "physical": ("mlx5_2", "LinkErrorRecovery")},
        True,
        "2 of 8 rails not usable: rail2 (mlx5_2, Active/LinkErrorRecovery, 172.16.0.143/31) -> "
        "leaf-p0-su01-r2 Ethernet28; rail5 (mlx5_5, Down/Disabled, 172.16.1.79/31) -> leaf-p0-su01-r5 "
        "Ethernet28",
    ),
    "gpu-su01-h09": (
        {"recorded": RECORDED, "panic_at": "mlx5_6"},
        True,
        "3 of 8 rails not usable: rail5 (mlx5_5, Down/Disabled, 172.16.1.81/31) -> leaf-p0-su01-r5 "
        "Ethernet32; rail6 (mlx5_6, not read, ibstat stopped at mlx5_6, 172.16.1.145/31) -> "
        "leaf-p0-su01-r6 Ethernet32; rail7 (mlx5_7, not read, ibstat stopped at mlx5_6, 172.16.1.209/31) "
        f"-> leaf-p0-su01-r7 Ethernet32; ibstat was not read completely: ibstat stopped at device "
        f"'mlx5_6' (ibpanic); the devices after it were not read: {PANIC.removeprefix('ibpanic: ')}",
    ),
}


def dual_port(text: str, ca: str) -> str:
    """``text`` with HCA ``ca`` given a second port, Down (its port 1 block with the state of a port that is down)."""
    blocks = text.split("CA '")
    for i, block in enumerate(blocks):
        if block.startswith(f"{ca}'"):
            head, port1 = block.split("\tPort 1:\n", 1)
            port2 = port1.replace("State: Active", "State: Down").replace(
                "Physical state: LinkUp", "Physical state: Disabled"
            )
            blocks[i] = (
                head.replace("Number of ports: 1", "Number of ports: 2") + "\tPort 1:\n" + port1 + "\tPort 2:\n" + port2
            )
    return "CA '".join(blocks)


def physical_state(text: str, ca: str, state: str) -> str:
    """``text`` with the port of HCA ``ca`` in physical state ``state`` (its logical state kept)."""
    blocks = text.split("CA '")
    for i, block in enumerate(blocks):
        if block.startswith(f"{ca}'"):
            blocks[i] = block.replace("Physical state: LinkUp", f"Physical state: {state}")
    return "CA '".join(blocks)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One ansible-playbook run over the nodes; the ansible.posix.json callback's document."""
    tmp = tmp_path_factory.mktemp("rail_check")
    plan_dir = tmp / "plan"
    render_to_dir(build_plan(load_intent(REPO / "inventory" / "demo")), plan_dir)
    hosts: dict[str, Any] = {}
    for host, (setup, _, _) in CASES.items():
        bindir = tmp / host / "bin"
        bindir.mkdir(parents=True)
        env = {"PATH": f"{bindir}{os.pathsep}/usr/bin{os.pathsep}/bin"}
        if "hca" in setup:  # what an intent's host.nccl_env renders: the derived value replaced in place
            env_file = plan_dir / "hosts" / host / "nccl.env"
            lines = env_file.read_text().splitlines(keepends=True)
            env_file.write_text(
                "".join(f"NCCL_IB_HCA={setup['hca']}\n" if line.startswith("NCCL_IB_HCA=") else line for line in lines)
            )
        if "recorded" in setup:
            output = setup["recorded"]
            panic = ""
            if "panic_at" in setup:  # ibstat lists the CAs in order and stops at the one it cannot stat
                output = tmp / host / "ibstat.txt"
                output.write_text(setup["recorded"].read_text().split(f"CA '{setup['panic_at']}'")[0])
                panic = f"echo \"{PANIC}\" >&2; exit 255\n"
            if "dual_port" in setup or "physical" in setup:
                text = setup["recorded"].read_text()
                if "dual_port" in setup:
                    text = dual_port(text, setup["dual_port"])
                if "physical" in setup:
                    text = physical_state(text, *setup["physical"])
                output = tmp / host / "ibstat.txt"
                output.write_text(text)
            ibstat = bindir / "ibstat"
            ibstat.write_text(f"#!/bin/sh\ncat '{output}'\n{panic or 'exit 0'}\n")
            ibstat.chmod(ibstat.stat().st_mode | stat.S_IXUSR)
        else:
            state = tmp / host / "state"
            state.mkdir()
            (state / "gpu_node.json").write_text(json.dumps(setup["fake"]))
            env = {"PATH": f"{FAKES}{os.pathsep}/usr/bin{os.pathsep}/bin", "HWAAC_FAKE_STATE": str(state)}
        hosts[host] = {
            "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable,
            "hwaac_environment": env,
        }
    inventory = tmp / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": hosts}}}}))
    playbook = REPO / "playbooks" / "rail_check.yml"  # the shipped playbook
    base = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    r = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", str(inventory), str(playbook), "-e", f"rail_check_plan_dir={plan_dir}"],
        cwd=REPO,
        env={
            **base,
            "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
            "ANSIBLE_SHOW_CUSTOM_STATS": "1",
            "PATH": f"{BIN}{os.pathsep}{base['PATH']}",
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 2, r.stdout[-4000:] + r.stderr[-4000:]  # failed hosts
    return json.loads(r.stdout)


@pytest.mark.parametrize("host", sorted(CASES))
def test_rail_check_names_the_unusable_rails(run: dict[str, Any], host: str) -> None:
    _, failed, message = CASES[host]
    assert run["stats"][host]["failures"] == int(failed)
    last = run["plays"][0]["tasks"][-1]
    assert last["task"]["name"] == "aiinfra.hwaac.rail_check : Check that every device NCCL uses is present and Active"
    result = last["hosts"][host]
    assert result.get("failed", False) is failed
    assert result["msg"] == message


def test_the_unusable_rails_are_published_to_the_workflow(run: dict[str, Any]) -> None:
    """set_stats (AWX's job artifacts): for each failed node, the rails its message names as not usable."""
    stats = run["global_custom_stats"]["rail_check_unusable"]
    assert sorted(stats) == sorted(h for h, (_, failed, _) in CASES.items() if failed)
    for host, rails in stats.items():
        message = CASES[host][2]
        assert rails and all(
            f"{r['rail']} ({r['hca']}, {r['problem']}, {r['address']}" in message
            and f"-> {r['leaf']} {r['leaf_port']}" in message
            for r in rails
        )
        assert len(rails) == int(message.split(" of 8 rails")[0])


def test_the_role_declares_its_variables() -> None:
    """``ansible-doc -t role`` and argument validation know every default (its default is templated from the
    inventory's hwaac_files, so the spec states none)."""
    role = REPO / "roles" / "rail_check"
    defaults = yaml.safe_load((role / "defaults" / "main.yml").read_text())
    options = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    assert set(defaults) == set(options)
    assert all("default" not in o for o in options.values())
