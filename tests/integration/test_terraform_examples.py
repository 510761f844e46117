"""The HCL examples and the synthesized cdktn stacks are valid Terraform for the provider from its mirror:
``terraform init`` (offline, lock file written) and ``terraform validate`` (the provider validates the intent
each plane names). No NetBox is needed: validation never connects."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from terraform_run import terraform_dir

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("example", ["demo", "netbox-pools"])
def test_hcl_example_inits_offline_and_validates(example: str, tmp_path: Path) -> None:
    # the same relative layout as in the repository: examples name ../../../inventory/demo
    shutil.copytree(REPO / "terraform/examples" / example, tmp_path / "terraform/examples" / example)
    shutil.copytree(REPO / "inventory/demo", tmp_path / "inventory/demo")
    tf = terraform_dir(tmp_path / "terraform/examples" / example, tmp_path / "mirror", "http://127.0.0.1:9", "x")
    r = tf.run("init", "-input=false")
    assert "Installed aiinfra/hwaac" in r.stdout
    assert (tf.dir / ".terraform.lock.hcl").is_file()
    r = tf.run("validate")
    assert "The configuration is valid" in r.stdout


def test_synthesized_demo_stack_inits_offline_and_validates(tmp_path: Path) -> None:
    out = tmp_path / "cdktf.out"
    env = {
        **os.environ,
        "HWAAC_FABRICS": "demo",
        "HWAAC_CDKTF_OUTDIR": str(out),
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
    }
    subprocess.run([sys.executable, "main.py"], cwd=REPO / "cdktf", env=env, check=True, capture_output=True)
    stack = out / "stacks" / "demo"
    assert (stack / "cdk.tf.json").is_file()
    tf = terraform_dir(stack, tmp_path / "mirror", "http://127.0.0.1:9", "x")
    tf.run("init", "-input=false")
    assert "The configuration is valid" in tf.run("validate").stdout
