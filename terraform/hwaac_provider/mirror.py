"""Offline install: build the provider into a local filesystem mirror and write a Terraform CLI configuration
that installs ``aiinfra/hwaac`` from it, so ``terraform init`` works with no registry and writes a lock file.

The mirror holds ``registry.terraform.io`` and ``registry.opentofu.org`` in Terraform's "unpacked" layout, beside
``terraform.rc`` (``TF_CLI_CONFIG_FILE``; OpenTofu: ``TOFU_CLI_CONFIG_FILE``). The executable is a two-line shell
script that runs ``python -m hwaac_provider`` with this environment's Python, so the lock file's ``h1:`` hash is
per installation. The layout and why: docs/terraform.md "Installing without a registry".
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

from hwaac_provider import VERSION

HOSTS = ("registry.terraform.io", "registry.opentofu.org")  # Terraform's and OpenTofu's default registries
NAMESPACE, TYPE = "aiinfra", "hwaac"
ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def target_platform() -> str:
    """Terraform's platform name of this machine, e.g. ``linux_amd64``."""
    system = platform.system().lower()
    machine = platform.machine().lower()
    return f"{system}_{ARCH.get(machine, machine)}"


def wrapper_text(python: str) -> str:
    return (
        f"#!/bin/sh\n# terraform-provider-hwaac {VERSION} (aiinfra/hwaac): the hwaac Python provider\n"
        f'exec "{python}" -m hwaac_provider "$@"\n'
    )


def cli_config_text(mirror: Path) -> str:
    sources = ", ".join(f'"{h}/{NAMESPACE}/{TYPE}"' for h in HOSTS)
    return (
        "# Terraform / OpenTofu CLI configuration written by `hwaac terraform mirror`:\n"
        "# aiinfra/hwaac comes from the local mirror, every other provider from its registry.\n"
        "provider_installation {\n"
        "  filesystem_mirror {\n"
        f'    path    = "{mirror}"\n'
        f"    include = [{sources}]\n"
        "  }\n"
        "  direct {\n"
        f"    exclude = [{sources}]\n"
        "  }\n"
        "}\n"
    )


def build_mirror(dest: Path, python: str | None = None) -> Path:
    """Write the mirror and CLI configuration under ``dest`` (created; rewritten when run again, byte for byte
    the same for the same Python). Returns the CLI configuration file."""
    dest = dest.resolve()
    python = python or sys.executable
    mirror = dest / "mirror"
    plat = target_platform()
    for host in HOSTS:
        folder = mirror / host / NAMESPACE / TYPE / VERSION / plat
        folder.mkdir(parents=True, exist_ok=True)
        exe = folder / f"terraform-provider-{TYPE}_v{VERSION}"
        text = wrapper_text(python)
        if not exe.exists() or exe.read_text() != text:
            tmp = exe.with_suffix(".tmp")
            tmp.write_text(text)
            tmp.chmod(0o755)
            os.replace(tmp, exe)
    rc = dest / "terraform.rc"
    rc.write_text(cli_config_text(mirror))
    return rc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="hwaac terraform mirror", description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--dir", default="build/terraform", help="where to write (default build/terraform)")
    args = ap.parse_args(argv)
    rc = build_mirror(Path(args.dir))
    print(f"provider aiinfra/hwaac {VERSION} mirrored for {target_platform()} under {rc.parent / 'mirror'}")
    print(f"export TF_CLI_CONFIG_FILE={rc}   # OpenTofu: export TOFU_CLI_CONFIG_FILE={rc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
