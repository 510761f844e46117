"""The Terraform provider ``aiinfra/hwaac``: fabric planes and IPAM pools declared as code, recorded in NetBox.

Written in Python on the ``tf`` framework (Terraform plugin protocol 6). It adapts hwaac: planning is
:mod:`hwaac.plan`, writing NetBox is :func:`hwaac.netbox.sync.sync_plan`, summaries are
:mod:`hwaac.netbox.plane_state`. Run as a plugin by Terraform (``python -m hwaac_provider``, from the mirror
that :mod:`hwaac_provider.mirror` builds).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

SOURCE = "aiinfra/hwaac"  # registry.terraform.io/aiinfra/hwaac (OpenTofu: registry.opentofu.org/aiinfra/hwaac)
try:
    VERSION = version("hwaac")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    VERSION = "0.1.0"
