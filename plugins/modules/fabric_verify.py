#!/usr/bin/python
# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Documentation of aiinfra.hwaac.fabric_verify; the work is done on the controller by its action plugin."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: fabric_verify
short_description: Judge gathered fabric facts with the hwaac.verify check catalog and write the reports
version_added: "0.1.0"
description:
  - Reads the facts folder M(aiinfra.hwaac.fabric_facts) wrote (one C(<device>.json) per device) and runs the
    check catalog of the Python package C(hwaac) (C(hwaac.verify)) against the plan - the same code as
    C(hwaac verify FOLDER --plan PLAN).
  - Checks LLDP neighbours against the cabling plan (a swapped or missing cable named by both ends and the
    cable id), interface state and MTU, BGP sessions and ASNs, prefixes received, ECMP width on every leaf,
    loopbacks, rail egress and reachability across SUs, path MTU.
  - A fault is named once (the cable, the switch); what only follows from it is judged against the plan minus
    it and attributed to it (docs/verify.md).
  - Writes C(verify.json), C(verify.xml) (JUnit), C(verify.md) in O(report_dir); changed when their content
    changed.
  - Fails the task when a check FAILs or ERRORs, unless O(fail_on_fail=false).
author:
  - hwaac maintainers (@aiinfra)
options:
  plan:
    description:
      - The plan folder (C(plan.json) and the rendered files).
    type: path
    required: true
  facts:
    description:
      - The facts folder M(aiinfra.hwaac.fabric_facts) wrote.
    type: path
    required: true
  report_dir:
    description:
      - Folder for the report files; none are written when unset.
    type: path
  formats:
    description:
      - Which report files to write.
    type: list
    elements: str
    default: [json, junit, markdown]
    choices: [json, junit, markdown, table]
  checks:
    description:
      - Check names to run (and report). Default every check.
    type: list
    elements: str
  devices:
    description:
      - Only the objects touching these devices (a rollout batch); default every device in the facts.
    type: list
    elements: str
  fail_on_fail:
    description:
      - Fail the task when any result is FAIL or ERROR.
    type: bool
    default: true
extends_documentation_fragment: [aiinfra.hwaac.attributes, aiinfra.hwaac.attributes.controller,
                                 aiinfra.hwaac.attributes.reports, aiinfra.hwaac.controller_requirements]
seealso:
  - module: aiinfra.hwaac.fabric_facts
"""

EXAMPLES = r"""
- name: Judge the fabric
  aiinfra.hwaac.fabric_verify:
    plan: build/demo
    facts: build/verify/facts
    report_dir: build/verify
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
extends_documentation_fragment: [aiinfra.hwaac.returns.report_files]
passed:
  description: No result is FAIL or ERROR.
  returned: success
  type: bool
counts:
  description: Results per status (PASS, FAIL, SKIP, ERROR).
  returned: success
  type: dict
faults:
  description: The faults the FAILs name, each once (C(fault) id, C(object), C(checks), C(kinds)).
  returned: success
  type: list
  elements: dict
failures:
  description: The FAIL and ERROR results (check, object, expected, actual, cable, ends, fault), at most 50.
  returned: success
  type: list
  elements: dict
"""


def main():  # pragma: no cover - the action plugin does the work
    from ansible_collections.aiinfra.hwaac.plugins.module_utils.verify_specs import controller_only

    controller_only("fabric_verify")


if __name__ == "__main__":
    main()
