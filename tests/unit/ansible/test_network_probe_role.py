"""Role aiinfra.hwaac.network_probe and playbooks/network_probe.yml (its argument spec and the playbook's syntax:
test_role_argument_specs.py): the role run on localhost as a demo GPU node writes its units into a scratch root,
which the real ``systemd-analyze verify`` accepts without a word (ExecStart: this checkout's hwaac) and
``systemd-analyze security`` rates as sandboxed; the responder answers on the node's planned rail addresses, the
prober writes the file that the telemetry tool ``probe`` reads; check mode writes nothing, a second run changes
nothing; what is missing fails."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.aiinfra.hwaac.plugins.module_utils.telemetry_tools import DEFAULT_PROBE_FILE, tool_argv
from hwaac.plan.model import ip_str
from tests.unit.probe.synth import demo

REPO = Path(__file__).resolve().parents[3]
ROLE = REPO / "roles" / "network_probe"
BIN = Path(sys.executable).parent
HWAAC = BIN / "hwaac"
NODE = "gpu-su01-h01"  # the demo node of the golden render (tests/golden/demo/hosts)
UNITS = ["hwaac-probe-responder.service", "hwaac-probe-send.service", "hwaac-probe-send.timer"]
ANALYZE = shutil.which("systemd-analyze")
needs_systemd = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")


def env() -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    return {**base, "PATH": f"{BIN}{os.pathsep}{base['PATH']}", "PYTHONPATH": str(REPO)}


def play(tmp: Path, root: Path, *options: str, **extra: Any) -> subprocess.CompletedProcess[str]:
    """playbooks/network_probe.yml on localhost as the demo node, its files below ``root``, services left alone."""
    (tmp / "hosts.yml").write_text(
        yaml.safe_dump(
            {
                "all": {
                    "children": {
                        "gpu_nodes": {
                            "hosts": {
                                NODE: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
                            }
                        }
                    }
                }
            }
        )
    )
    variables = {
        "network_probe_root": str(root),
        "network_probe_services": False,
        "network_probe_hwaac": str(HWAAC),
        "network_probe_files": str(REPO / "tests/golden/demo/hosts" / NODE),
        "network_probe_intent_src": str(REPO / "inventory/demo"),
        "ansible_become": False,
        **extra,
    }
    return subprocess.run(
        [
            str(BIN / "ansible-playbook"),
            "-i",
            str(tmp / "hosts.yml"),
            str(REPO / "playbooks" / "network_probe.yml"),
            "-e",
            json.dumps(variables),
            *options,
        ],
        cwd=REPO,
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def changed(run: subprocess.CompletedProcess[str]) -> int:
    m = re.search(rf"^{NODE}\s*:.*\bchanged=(\d+)", run.stdout, re.M)
    assert m, run.stdout[-3000:]
    return int(m.group(1))


def unit(root: Path, name: str) -> dict[str, list[str]]:
    """``key -> values`` of a unit file (the units have no repeated sections)."""
    out: dict[str, list[str]] = {}
    for line in (root / "etc/systemd/system" / name).read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            out.setdefault(key, []).append(value)
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The role run once with its defaults into a scratch root: (the root, the run)."""
    tmp = tmp_path_factory.mktemp("probe-role")
    run = play(tmp, tmp / "root", "--diff")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr
    return tmp / "root", run


@needs_systemd
def test_systemd_analyze_verify_accepts_every_unit_without_a_word(installed: tuple[Path, Any]) -> None:
    root, _ = installed
    paths = [str(root / "etc/systemd/system" / u) for u in UNITS]
    r = subprocess.run([str(ANALYZE), "verify", *paths], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout + r.stderr) == (0, "")  # verify exits 0 on an unknown key: its words count too


@needs_systemd
@pytest.mark.parametrize("name", UNITS[:2])
def test_the_services_are_sandboxed(installed: tuple[Path, Any], name: str) -> None:
    root, _ = installed
    # --threshold is ten times the exposure printed (0.0 to 10.0): fail above 2.0
    r = subprocess.run(
        [str(ANALYZE), "security", "--offline=yes", "--threshold=20", str(root / "etc/systemd/system" / name)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    u = unit(root, name)
    assert u["DynamicUser"] == ["yes"] and u["CapabilityBoundingSet"] == [""] and u["ProtectSystem"] == ["strict"]


def test_the_responder_answers_on_the_nodes_planned_rail_addresses(installed: tuple[Path, Any]) -> None:
    root, _ = installed
    planned = sorted(ip_str(lk.a_ip) for lk in demo().links if lk.kind == "host" and lk.a_device == NODE)
    assert len(planned) == 8
    argv = unit(root, UNITS[0])["ExecStart"][0].split()
    assert argv[:4] == [str(HWAAC), "probe", "respond", "--freebind"]
    assert sorted(argv[i + 1] for i, a in enumerate(argv) if a == "--bind") == planned


def test_the_prober_writes_the_file_the_telemetry_tool_reads(installed: tuple[Path, Any]) -> None:
    root, _ = installed
    send = unit(root, UNITS[1])
    argv = send["ExecStart"][0].split()
    assert argv[:3] == [str(HWAAC), "probe", "send"]
    assert argv[argv.index("--host") + 1] == NODE and argv[argv.index("--count") + 1] == "100"
    out = argv[argv.index("--out") + 1]
    assert out == DEFAULT_PROBE_FILE == tool_argv("probe")[-1]
    assert send["StateDirectory"] == [str(Path(out).parent.relative_to("/var/lib"))]  # the one folder it writes
    assert Path(argv[argv.index("--paths") + 1]).parent == Path(out).parent
    intent = argv[3]
    assert (root / intent.lstrip("/")).read_text() == (REPO / "inventory/demo/fabric.yml").read_text()
    timer = unit(root, UNITS[2])
    assert (timer["OnUnitActiveSec"], timer["Unit"]) == (["300"], [UNITS[1]])


def test_a_second_run_changes_nothing_and_showed_its_diff(installed: tuple[Path, Any], tmp_path: Path) -> None:
    root, first = installed
    assert changed(first) == 4  # tasks: the intent's folder, the intent, the unit folder, the units (one loop)
    assert "+ExecStart=" in first.stdout  # --diff shows the units
    again = play(tmp_path, root)
    assert again.returncode == 0 and changed(again) == 0, again.stdout[-3000:]


def test_check_mode_writes_nothing(tmp_path: Path) -> None:
    run = play(tmp_path, tmp_path / "root", "--check", "--diff")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr
    assert changed(run) == 4 and not (tmp_path / "root").exists()


@needs_systemd
def test_given_addresses_and_the_forced_receive_buffer(tmp_path: Path) -> None:
    run = play(
        tmp_path,
        tmp_path / "root",
        network_probe_bind=["10.9.0.1", "10.9.0.3"],
        network_probe_rcvbuf_force=True,
        network_probe_send_args=["--peers", "4"],
        network_probe_interval=60,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr
    root = tmp_path / "root"
    responder, send = unit(root, UNITS[0]), unit(root, UNITS[1])
    assert responder["ExecStart"][0].endswith("--freebind --bind 10.9.0.1 --bind 10.9.0.3")
    assert responder["AmbientCapabilities"] == ["CAP_NET_ADMIN"] and send["AmbientCapabilities"] == [""]
    assert send["ExecStart"][0].endswith("--count 100 --peers 4")
    r = subprocess.run(
        [str(ANALYZE), "verify", *(str(root / "etc/systemd/system" / u) for u in UNITS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (r.returncode, r.stdout + r.stderr) == (0, "")


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"network_probe_hwaac": "/nonexistent/hwaac"}, "/nonexistent/hwaac is not an executable"),
        ({"network_probe_files": "/nonexistent"}, "the responder's addresses on gpu-su01-h01 are unknown"),
        ({"network_probe_bind": ["10.0.0.1 --port 1"]}, "a word systemd would not take as it is"),
        ({"network_probe_intent_src": ""}, "/etc/hwaac/fabric.yml is not on gpu-su01-h01"),
    ],
    ids=["no hwaac", "no netplan", "a bad address", "no intent"],
)
def test_what_is_missing_fails_before_anything_is_written(tmp_path: Path, extra: dict, words: str) -> None:
    run = play(tmp_path, tmp_path / "root", **extra)
    assert run.returncode != 0 and words in run.stdout, run.stdout[-3000:]
    assert not (tmp_path / "root" / "etc/systemd").exists()
