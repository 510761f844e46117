"""GPU node health: tool-output parsers, SKU threshold profiles, node verdicts and lifecycle rules.

- :mod:`hwaac.health.result`: Status (PASS < WARN < UNKNOWN < FAIL), Finding, ToolResult;
- :mod:`hwaac.health.parsers`: one module per tool, pure functions from raw output to typed results;
- :mod:`hwaac.health.checks`: typed results + a SKU profile -> findings; :func:`hwaac.health.node.verdict`
  combines them.

Each module names its own public sources (the tools' source files and vendor documents); the formats read are
described in ``docs/health-gpu-parsers.md`` and ``docs/health-parsers.md``.
"""

from hwaac.health.result import Action, Finding, Status, ToolResult

__all__ = ["Action", "Finding", "Status", "ToolResult"]
