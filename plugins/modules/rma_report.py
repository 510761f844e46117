#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Documentation of aiinfra.hwaac.rma_report; the work is done on the controller by its action plugin."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rma_report
short_description: Write a node's RMA report (Markdown and JSON) from the evidence hwaac recorded in NetBox
version_added: "0.1.0"
description:
  - Reads the node's device record and the journal entries hwaac wrote at each lifecycle move, and writes
    C(<dest>/<node>.rma.md) and C(<node>.rma.json) on the controller with the serials (node, GPUs, NICs), the fault
    codes, both ends of failing links and every event's evidence (raw output excerpts included).
  - Changed when a file's content changed; the report's timestamp is left out of the comparison.
author:
  - hwaac maintainers (@aiinfra)
options:
  node:
    description: The device name in NetBox; default the inventory host name.
    type: str
  dest:
    description: Folder on the controller.
    type: path
    required: true
  netbox_url:
    description: The NetBox; default C(NETBOX_URL), else the local NetBox.
    type: str
  netbox_token:
    description: Its API token; default C(NETBOX_TOKEN). Never logged or returned.
    type: str
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.controller,
                                 aiinfra.hwaac.controller_requirements.netbox]
seealso:
  - module: aiinfra.hwaac.node_lifecycle
"""

EXAMPLES = r"""
- name: RMA report
  aiinfra.hwaac.rma_report:
    dest: reports/rma
"""

RETURN = r"""
fault_codes:
  description: The fault codes over the node's events.
  returned: success
  type: list
  elements: str
files:
  description: The files written.
  returned: success
  type: list
  elements: str
"""


def main():  # pragma: no cover - the action plugin does the work
    from ansible_collections.aiinfra.hwaac.plugins.module_utils.controller_specs import controller_only

    controller_only("rma_report")


if __name__ == "__main__":
    main()
