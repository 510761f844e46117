"""Run the real ``terraform`` against the provider from its local mirror (what `hwaac terraform mirror` builds).

Every command gets a CLI configuration that installs aiinfra/hwaac from the mirror and nothing from a registry,
``CHECKPOINT_DISABLE=1`` and ``TF_IN_AUTOMATION=1``; NetBox comes from ``TF_VAR_netbox_url`` /
``TF_VAR_netbox_token`` (sensitive variables the test configurations pass to the provider).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hwaac_provider.mirror import build_mirror

PROVIDER_BLOCK = """
terraform {
  required_providers {
    hwaac = { source = "aiinfra/hwaac", version = "~> 0.1" }
  }
}

variable "netbox_url" {
  type = string
}

variable "netbox_token" {
  type      = string
  sensitive = true
}

provider "hwaac" {
  url   = var.netbox_url
  token = var.netbox_token
}
"""


@dataclass
class Terraform:
    """A Terraform working folder ``dir`` with the environment ``env`` to run commands in."""

    dir: Path
    env: dict[str, str]

    def run(
        self,
        *args: str,
        check: bool = True,
        timeout: float = 600,
        extra_env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        r = subprocess.run(
            ["terraform", *args, "-no-color"] if args[0] not in ("output",) else ["terraform", *args],
            cwd=self.dir,
            env={**self.env, **(extra_env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and r.returncode != 0:
            raise AssertionError(f"terraform {' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
        return r

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            ["terraform", *args, "-no-color"],
            cwd=self.dir,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def show_plan(self, planfile: str = "tfplan") -> dict[str, Any]:
        return json.loads(self.run("show", "-json", planfile).stdout)

    def state(self) -> dict[str, Any]:
        return json.loads((self.dir / "terraform.tfstate").read_text())


def terraform_dir(folder: Path, mirror: Path, url: str, token: str) -> Terraform:
    """A working folder whose CLI configuration installs aiinfra/hwaac from a mirror built under ``mirror``."""
    rc = build_mirror(mirror)
    folder.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TF_", "NETBOX_"))}
    env.update(
        TF_CLI_CONFIG_FILE=str(rc),
        CHECKPOINT_DISABLE="1",
        TF_IN_AUTOMATION="1",
        TF_VAR_netbox_url=url,
        TF_VAR_netbox_token=token,
    )
    return Terraform(folder, env)


def resource_changes(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """address -> change ({actions, before, after}) of a ``terraform show -json`` plan."""
    return {rc["address"]: rc["change"] for rc in plan.get("resource_changes", [])}
