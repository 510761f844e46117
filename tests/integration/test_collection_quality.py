"""The collection as users get it: ansible-lint (production profile) on the checkout; the artifact of
``ansible-galaxy collection build`` installed into a clean collections path passes ``ansible-test sanity`` and works
from there (the inventory plugin and a role, with no part of the checkout on Ansible's paths)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

# ansible-test bootstraps pip in its test venvs with get-pip.py from ci-files.testing.ansible.com, which this
# offline machine cannot reach; it takes a script saved in its cache instead. This one gets pip from the standard
# library's ensurepip and installs the pinned requirements from the configured package index, as get-pip would.
GET_PIP = '''\
# Offline stand-in for ansible-test's get-pip bootstrap, written by hwaac's tests (test_collection_quality.py).
import ensurepip
import os
import subprocess
import sys

env = dict(os.environ)  # ensurepip points PIP_CONFIG_FILE at /dev/null in this process; the install needs the config
ensurepip.bootstrap(upgrade=True)
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]  # get-pip's own options
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", *args], env=env))
'''


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "NETBOX_"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return {**env, **extra}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built artifact installed into a fresh collections path; returns that path."""
    tmp = tmp_path_factory.mktemp("collection")
    r = subprocess.run(
        [str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(tmp), str(REPO)],
        cwd=tmp,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    (artifact,) = tmp.glob("aiinfra-hwaac-*.tar.gz")
    path = tmp / "collections"
    r = subprocess.run(
        [str(BIN / "ansible-galaxy"), "collection", "install", "-p", str(path), str(artifact)],
        cwd=tmp,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert (path / "ansible_collections" / "aiinfra" / "hwaac" / "MANIFEST.json").is_file()
    return path


@pytest.mark.cost(100)
def test_ansible_lint_production_profile() -> None:
    r = subprocess.run(
        [str(BIN / "ansible-lint")], cwd=REPO, env=clean_env(NO_COLOR="1"), capture_output=True, text=True, timeout=900
    )
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert "Profile 'production' was required, and it passed" in out


@pytest.mark.cost(300)
def test_ansible_test_sanity_on_the_built_collection(installed: Path) -> None:
    source = (
        Path(sys.executable).parents[1]
        / "lib"
        / f"python{sys.version_info[0]}.{sys.version_info[1]}"
        / "site-packages"
        / "ansible_test"
        / "_internal"
        / "python_requirements.py"
    ).read_text()
    m = re.search(r"pip='([0-9.]+)'", source)
    assert m, "ansible-test's pinned pip version not found"
    cache = Path.home() / ".ansible" / "test" / "cache" / f"get_pip_{m.group(1).replace('.', '_')}.py"
    if not cache.exists() or "hwaac" in cache.read_text():
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(GET_PIP)
    root = installed / "ansible_collections" / "aiinfra" / "hwaac"
    r = subprocess.run(
        [str(BIN / "ansible-test"), "sanity", "--python", "3.12", "--requirements"],
        cwd=root,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 0, "\n".join(line for line in out.splitlines() if "ERROR" in line or "FATAL" in line)[-6000:]
    assert 'Running sanity test "validate-modules"' in out and 'Running sanity test "pylint"' in out


def test_the_installed_collection_works_from_a_clean_path(installed: Path, tmp_path: Path) -> None:
    env = clean_env(ANSIBLE_COLLECTIONS_PATH=str(installed), ANSIBLE_INVENTORY_ENABLED="aiinfra.hwaac.fabric")
    out = tmp_path / "plan"
    r = subprocess.run(
        [str(BIN / "hwaac"), "plan", str(REPO / "inventory/demo"), "-o", str(out)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    (tmp_path / "demo.hwaac.yml").write_text("plugin: aiinfra.hwaac.fabric\nplan_file: plan\nrender_dir: plan\n")
    r = subprocess.run(
        [str(BIN / "ansible-inventory"), "-i", "demo.hwaac.yml", "--list"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["gpu_nodes"]["hosts"]) == 64
    # a role of the installed collection on localhost: the node's per-rail netplan into a scratch root, validated
    # by the real netplan generate (apply left out: it would reconfigure this machine)
    (tmp_path / "play.yml").write_text(f"""
- name: Host networking from the installed collection
  hosts: gpu-su01-h01
  gather_facts: false
  vars:
    ansible_connection: local
    ansible_python_interpreter: {sys.executable}
    host_network_root: {tmp_path / "root"}
    host_network_mgmt_interface: eth0
    host_network_apply: false
  roles:
    - aiinfra.hwaac.host_network
""")
    r = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", "demo.hwaac.yml", "play.yml"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr
    # ...and it is the installed copy Ansible used, no other
    listed = subprocess.run(
        [str(BIN / "ansible-galaxy"), "collection", "list", "aiinfra.hwaac"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    ).stdout
    assert f"# {installed / 'ansible_collections'}" in listed and listed.count("aiinfra.hwaac") == 1
    assert (tmp_path / "root/etc/netplan/60-hwaac-rails.yaml").read_text() == (
        out / "hosts/gpu-su01-h01/netplan/60-hwaac-rails.yaml"
    ).read_text()
