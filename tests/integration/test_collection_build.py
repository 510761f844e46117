"""The repository root is the Ansible collection aiinfra.hwaac: galaxy.yml is valid and the build succeeds."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).parents[2]


@pytest.mark.integration
def test_ansible_galaxy_collection_build(tmp_path: Path):
    galaxy = Path(sys.executable).with_name("ansible-galaxy")
    assert galaxy.exists(), "ansible-core is a test dependency; run scripts/bootstrap.sh"
    proc = subprocess.run(
        [str(galaxy), "collection", "build", "--output-path", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (artifact,) = tmp_path.glob("aiinfra-hwaac-*.tar.gz")
    with tarfile.open(artifact) as tar:
        names = tar.getnames()
        manifest = json.load(tar.extractfile("MANIFEST.json"))  # type: ignore[arg-type]
    info = manifest["collection_info"]
    assert (info["namespace"], info["name"]) == ("aiinfra", "hwaac")
    assert "meta/runtime.yml" in names and "README.md" in names
    # nothing of the developer's machine goes into the artifact
    assert not [n for n in names if n.startswith((".venv", "build/", "ansible_collections"))]


def test_collection_path_resolves_to_the_root():
    link = REPO / "ansible_collections" / "aiinfra" / "hwaac"
    assert link.is_symlink() and link.resolve() == REPO.resolve()
