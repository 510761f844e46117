# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Return values that several modules document alike, for ``extends_documentation_fragment`` in their RETURN
(ansible-core's plugin_docs.add_fragments with section RETURN); a module's own keys take precedence."""

from __future__ import annotations


class ModuleDocFragment:
    # a module that runs probes on the node for its action plugin to judge (aiinfra.hwaac.returns.probes)
    PROBES = r"""
codes:
  description: Fault codes of the findings that are not PASS.
  returned: success
  type: list
  elements: str
findings:
  description: Every finding (code, status, message, subject, evidence, action).
  returned: success
  type: list
  elements: dict
outputs:
  description: Per probe the raw output (C(rc), C(stdout), C(stderr), C(seconds), C(timed_out)).
  returned: success
  type: dict
"""

    # a controller module that writes report files to report_dir (aiinfra.hwaac.returns.report_files)
    REPORT_FILES = r"""
files:
  description: The report files written (or that would be, in check mode).
  returned: when report_dir is set
  type: list
  elements: str
"""
