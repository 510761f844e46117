#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Documentation of aiinfra.hwaac.burn_in_report; the work is done on the controller by its action plugin."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: burn_in_report
short_description: Combine a node's burn-in stages into its verdict and write its report (JSON and Markdown)
version_added: "0.1.0"
description:
  - Takes the registered results of M(aiinfra.hwaac.node_health) per stage and gives the node's verdict (the worst
    stage), the fault codes, the recommended action and the evidence a lifecycle move records
    (RV(evidence), for M(aiinfra.hwaac.node_lifecycle)).
  - Writes C(<report_dir>/<node>.burn-in.json) and C(<node>.burn-in.md) on the controller; changed when their
    content changed.
  - A failing NIC port is named by its Linux interface (from the node's rendered C(nic-roce.json)) so that the
    journal can record both ends of the link from NetBox's cables.
author:
  - hwaac maintainers (@aiinfra)
options:
  stages:
    description:
      - Stage name to the registered result of M(aiinfra.hwaac.node_health). Skipped stages are left out.
    type: dict
    required: true
  report_dir:
    description:
      - Folder on the controller for the report files; none are written when unset.
    type: path
  node:
    description:
      - The node's name; default the inventory host name.
    type: str
  profile:
    description:
      - The SKU profile's name, recorded in the report.
    type: str
    default: hgx-h200-8x400g
  interfaces:
    description:
      - RDMA device to Linux interface (C(mlx5_3) to C(rail3)); default from C(<hwaac_files>/nic-roce.json).
    type: dict
  kind:
    description:
      - What the report is of; the file names use it.
    type: str
    default: burn-in
    choices: [burn-in, health]
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.controller,
                                 aiinfra.hwaac.controller_requirements]
seealso:
  - module: aiinfra.hwaac.node_health
  - module: aiinfra.hwaac.node_lifecycle
"""

EXAMPLES = r"""
- name: Report
  aiinfra.hwaac.burn_in_report:
    stages:
      quick: "{{ quick }}"
      dcgm: "{{ dcgm }}"
    report_dir: reports/burn-in
  register: report
"""

RETURN = r"""
extends_documentation_fragment: [aiinfra.hwaac.returns.report_files]
status:
  description: The node's verdict (PASS, WARN, UNKNOWN, FAIL).
  returned: success
  type: str
codes:
  description: Fault codes.
  returned: success
  type: list
  elements: str
action:
  description: The recommended action.
  returned: success
  type: str
stages:
  description: Stage to its verdict.
  returned: success
  type: dict
evidence:
  description: The evidence for M(aiinfra.hwaac.node_lifecycle) (verdict, codes, findings, raw excerpts, serials,
    failing interfaces).
  returned: success
  type: dict
"""


def main():  # pragma: no cover - the action plugin does the work
    from ansible_collections.aiinfra.hwaac.plugins.module_utils.controller_specs import controller_only

    controller_only("burn_in_report")


if __name__ == "__main__":
    main()
