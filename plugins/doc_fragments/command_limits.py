# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Options shared by the host modules that run read-only tools and return their raw output."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  timeout:
    description:
      - Seconds each command may run; a command still running then is killed and its result says C(timed_out).
    type: float
    default: 60.0
  max_output:
    description:
      - Bytes of output (stdout and stderr together) kept over all commands of the task. A command's output past
        the cap is cut and marked C(truncated); commands after the cap is reached are not run (C(rc) null, the
        reason in C(stderr)).
    type: int
    default: 67108864
"""
