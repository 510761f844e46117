"""tests.fakes.simulate for Lustre clients: a GPU node with a rendered ``lustre-client.json`` becomes a fake host with
the Lustre client installed and LNet not started, which aiinfra.hwaac.lnet and the mount fake converge.

Render input: the golden demo render (tests/golden/demo, checked against ``hwaac plan`` by test_render_host). The
expected rail addresses below were read by hand from its ``hosts/gpu-su01-h01/netplan/60-hwaac-rails.yaml``.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fakes.simulate import LNET_SERVICE, main, simulate
from tests.unit.ansible.module_run import run_module

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "demo"
FAKES = REPO / "tests" / "fakes" / "bin"
NODE = "gpu-su01-h01"
RAILS = {
    "rail0": "172.16.0.1",
    "rail1": "172.16.0.65",
    "rail2": "172.16.0.129",
    "rail3": "172.16.0.193",
    "rail4": "172.16.1.1",
    "rail5": "172.16.1.65",
    "rail6": "172.16.1.129",
    "rail7": "172.16.1.193",
}


def copy_render(tmp: Path) -> Path:
    render = tmp / "render"
    shutil.copytree(GOLDEN, render)
    return render


def edit_client(render: Path, change) -> None:
    path = render / "hosts" / NODE / "lustre-client.json"
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def env(state: Path) -> dict[str, str]:
    """The simulated node's environment, as the molecule scenario lustre_client sets it."""
    return {
        **os.environ,
        "PATH": f"{FAKES}{os.pathsep}{os.environ['PATH']}",
        "HWAAC_FAKE_STATE": str(state),
        "HWAAC_FAKE_SYSTEMD_DIRS": str(state.parent / "root" / "etc" / "systemd" / "system"),
        "PYTHONPATH": str(REPO),
    }


def run(state: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), env=env(state), capture_output=True, text=True, timeout=60, check=False)


def test_gpu_node_gets_an_installed_client_with_lnet_not_started(tmp_path: Path) -> None:
    made = simulate(GOLDEN, tmp_path / "sim")
    assert made == {"switches": 2, "nodes": 1, "lustre_clients": 1}
    state = tmp_path / "sim" / NODE / "state"
    lnet = json.loads((state / "lnet.json").read_text())
    assert lnet == {
        "loaded": False,
        "configured": False,
        "layout": "2.15",
        "version": "2.15.5",
        "interfaces": RAILS,
        "nets": [],
    }
    unit = (tmp_path / "sim" / NODE / "root" / "etc" / "systemd" / "system" / "lnet.service").read_text()
    assert unit == LNET_SERVICE
    # the lines of lustre-release lustre/scripts/systemd/lnet.service.in (2.15) that matter to a client
    for line in (
        "After=network-online.target openibd.service rdma.service opa.service",
        "ConditionPathExists=!/proc/sys/lnet/",
        "ExecStart=/sbin/modprobe lnet",
        "ExecStart=/usr/sbin/lnetctl lnet configure",
        "ExecStart=/usr/sbin/lnetctl import /etc/lnet.conf",
        "ExecStop=/usr/sbin/lustre_rmmod",
        "WantedBy=multi-user.target",
    ):
        assert line in unit.splitlines()
    # nothing mounted, nothing enabled, no modinfo/ofed_info state (their defaults match the node)
    assert sorted(p.name for p in state.iterdir()) == ["lnet.json"]


def test_the_fakes_see_a_node_with_lnet_modules_not_loaded(tmp_path: Path) -> None:
    simulate(GOLDEN, tmp_path / "sim")
    state = tmp_path / "sim" / NODE / "state"
    show = run(state, "lnetctl", "net", "show")
    assert show.returncode != 0
    assert "hint: the kernel modules may not be loaded" in show.stderr
    assert run(state, "lctl", "list_nids").returncode == 1
    enabled = run(state, "systemctl", "is-enabled", "lnet")
    assert (enabled.returncode, enabled.stdout.strip()) == (1, "disabled")
    assert run(state, "systemctl", "enable", "lnet").returncode == 0
    units = state.parent / "root" / "etc" / "systemd" / "system"
    assert (units / "multi-user.target.wants" / "lnet.service").is_symlink()
    assert run(state, "systemctl", "is-enabled", "lnet").stdout.strip() == "enabled"
    modinfo = run(state, "modinfo", "-F", "depends", "ko2iblnd")
    assert modinfo.returncode == 0 and "mlx_compat" in modinfo.stdout  # built against the node's DOCA-OFED
    assert run(state, "ofed_info", "-s").stdout.strip() == "OFED-internal-24.07-0.6.1:"


def test_lnet_module_and_mount_converge_on_the_simulated_node(tmp_path: Path) -> None:
    """What the role does: aiinfra.hwaac.lnet with the rendered networks, then mount the rendered file system."""
    simulate(GOLDEN, tmp_path / "sim")
    state = tmp_path / "sim" / NODE / "state"
    client = json.loads((GOLDEN / "hosts" / NODE / "lustre-client.json").read_text())
    args = {
        "networks": client["lnet"]["networks"],
        "global": client["lnet"]["global"],
        "lnet_conf": str(tmp_path / "lnet.conf"),
        "proc_mounts": str(state / "proc_mounts"),
    }
    res = run_module("lnet", args, tmp_path / "a1.json", env(state))
    assert res.get("failed") is not True, res
    assert res["changed"] is True
    assert res["nids"] == [f"{ip}@o2ib" for ip in RAILS.values()]
    again = run_module("lnet", args, tmp_path / "a2.json", env(state))
    assert (again["changed"], again["commands"]) == (False, [])

    fs = client["filesystems"][0]
    mount_point = tmp_path / "mnt" / fs["name"]
    mount_point.mkdir(parents=True)
    source = ":".join(",".join(node) for node in fs["mgs"]) + f":/{fs['name']}"
    mounted = run(state, "mount", "-t", "lustre", "-o", ",".join(fs["options"]), source, str(mount_point))
    assert mounted.returncode == 0, mounted.stderr
    assert f"{source} {mount_point} lustre " in (state / "proc_mounts").read_text()


def test_node_without_lustre_client_json_is_as_before(tmp_path: Path) -> None:
    render = copy_render(tmp_path)
    (render / "hosts" / NODE / "lustre-client.json").unlink()
    made = simulate(render, tmp_path / "sim")
    assert made == {"switches": 2, "nodes": 1, "lustre_clients": 0}
    host = tmp_path / "sim" / NODE
    assert sorted(p.name for p in host.iterdir()) == ["configfs", "root", "state", "sys"]
    assert list((host / "state").iterdir()) == []
    assert [p.relative_to(host / "root").as_posix() for p in (host / "root").rglob("*") if p.is_file()] == [
        "etc/netplan/50-cloud-init.yaml"
    ]


def test_interface_named_outside_the_rails_gets_a_fixed_stand_in_address(tmp_path: Path) -> None:
    render = copy_render(tmp_path)
    edit_client(
        render,
        lambda d: d["lnet"]["networks"].append(
            {"net": "tcp0", "interfaces": ["eth2"], "tunables": {}, "lnd_tunables": {}}
        ),
    )
    simulate(render, tmp_path / "a")
    simulate(render, tmp_path / "b")
    first = json.loads((tmp_path / "a" / NODE / "state" / "lnet.json").read_text())["interfaces"]
    second = json.loads((tmp_path / "b" / NODE / "state" / "lnet.json").read_text())["interfaces"]
    assert first == second
    assert {k: v for k, v in first.items() if k != "eth2"} == RAILS
    assert ipaddress.IPv4Address(first["eth2"]) in ipaddress.IPv4Network("198.18.0.0/15")


@pytest.mark.parametrize(("version", "layout"), [("2.16.1", "2.16"), ("2.17.0", "2.16"), ("2.12.9", "2.15")])
def test_client_version_sets_version_and_lnetctl_layout(tmp_path: Path, version: str, layout: str) -> None:
    render = copy_render(tmp_path)
    edit_client(render, lambda d: d.update(client_version=version))
    simulate(render, tmp_path / "sim")
    lnet = json.loads((tmp_path / "sim" / NODE / "state" / "lnet.json").read_text())
    assert (lnet["version"], lnet["layout"]) == (version, layout)


def test_bad_client_version_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    render = copy_render(tmp_path)
    edit_client(render, lambda d: d.update(client_version="latest"))
    with pytest.raises(ValueError, match=r"lustre-client.json: client_version 'latest': not MAJOR.MINOR"):
        simulate(render, tmp_path / "sim")
    assert main(["--render", str(render), "--out", str(tmp_path / "sim2"), "--reset"]) == 2
    assert "client_version 'latest'" in capsys.readouterr().err


def test_existing_host_is_kept_unless_reset(tmp_path: Path) -> None:
    simulate(GOLDEN, tmp_path / "sim")
    path = tmp_path / "sim" / NODE / "state" / "lnet.json"
    configured = {**json.loads(path.read_text()), "loaded": True, "configured": True}
    path.write_text(json.dumps(configured))
    assert simulate(GOLDEN, tmp_path / "sim")["lustre_clients"] == 0
    assert json.loads(path.read_text()) == configured
    assert simulate(GOLDEN, tmp_path / "sim", reset=True)["lustre_clients"] == 1
    assert json.loads(path.read_text())["loaded"] is False


def test_a_bad_client_file_leaves_no_half_made_host(tmp_path: Path) -> None:
    render = copy_render(tmp_path)
    edit_client(render, lambda d: d.update(client_version="2"))
    with pytest.raises(ValueError, match="client_version '2'"):
        simulate(render, tmp_path / "sim")
    assert not (tmp_path / "sim" / NODE).exists()


def test_a_node_simulated_before_its_fabric_had_storage_gets_the_client_installed(tmp_path: Path) -> None:
    render = copy_render(tmp_path)
    client = render / "hosts" / NODE / "lustre-client.json"
    saved = client.read_text()
    client.unlink()
    simulate(render, tmp_path / "sim")  # the fabric without storage
    host = tmp_path / "sim" / NODE
    (host / "state" / "mlxconfig.json").write_text("{}")  # what earlier runs left on the node stays
    assert not (host / "state" / "lnet.json").exists()
    client.write_text(saved)  # the intent gains a storage section
    made = simulate(render, tmp_path / "sim")
    assert made == {"switches": 0, "nodes": 0, "lustre_clients": 1}
    assert json.loads((host / "state" / "lnet.json").read_text())["interfaces"]["rail0"] == RAILS["rail0"]
    assert (host / "root" / "etc" / "systemd" / "system" / "lnet.service").read_text() == LNET_SERVICE
    assert (host / "state" / "mlxconfig.json").read_text() == "{}"
    assert simulate(render, tmp_path / "sim")["lustre_clients"] == 0  # once
