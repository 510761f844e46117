# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""What the modules whose action plugin does the work need on the controller."""

from __future__ import annotations


class ModuleDocFragment:
    # the action plugin imports the hwaac package
    DOCUMENTATION = r"""
options: {}
requirements:
  - On the controller, the Python package C(hwaac).
"""

    # the action plugin reads or writes NetBox too (aiinfra.hwaac.controller_requirements.netbox)
    NETBOX = r"""
options: {}
requirements:
  - On the controller, the Python package C(hwaac) and a NetBox 4.7 it can reach.
"""
