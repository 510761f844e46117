# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""The wording of the attributes every module documents, and the support of each kind of module.

Modelled on community.general's plugins/doc_fragments/attributes.py: DOCUMENTATION and PLATFORM give the
descriptions; CHANGES, CONTROLLER and PROBES the support of a kind of module (the last two with PLATFORM's
description), which adds only its own details; REPORTS adds those of a controller module that writes reports.
"""

from __future__ import annotations


class ModuleDocFragment:
    # check_mode and diff_mode: every module documents both
    DOCUMENTATION = r"""
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
"""

    # platform: the modules that name the hosts they run on (aiinfra.hwaac.attributes.platform)
    PLATFORM = r"""
attributes:
  platform:
    description: Target OS/families that can be operated against.
"""

    # a host module that changes settings: check mode predicts, diff mode shows the change
    CHANGES = r"""
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
"""

    # a module that runs on the controller and shows no diff (PLATFORM included)
    CONTROLLER = r"""
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    description: Target OS/families that can be operated against.
    platforms: [controller]
    support: full
"""

    # with CONTROLLER, a module that judges and writes report files
    REPORTS = r"""
attributes:
  check_mode:
    details: Judging changes nothing; in check mode the report files are not written.
"""

    # a node module that runs read-only probes for its action plugin to judge (PLATFORM included)
    PROBES = r"""
attributes:
  check_mode:
    support: full
    details: The probes change nothing on the node; check mode runs them.
  diff_mode:
    support: none
  platform:
    description: Target OS/families that can be operated against.
    platforms: [linux]
    support: full
"""
