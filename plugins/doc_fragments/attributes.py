# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""The wording of the attributes every module documents; each module adds only its support and details.

Modelled on community.general's plugins/doc_fragments/attributes.py.
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
