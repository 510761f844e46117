"""GPU node health: tool-output parsers, SKU threshold profiles, node verdicts and lifecycle rules.

- :mod:`hwaac.health.result`: Status (PASS < WARN < UNKNOWN < FAIL), Finding, ToolResult;
- :mod:`hwaac.health.parsers`: one module per tool, pure functions from raw output to typed results;
- :mod:`hwaac.health.checks`: typed results + a SKU profile -> findings; :mod:`hwaac.health.verdict` combines them.

Domain facts come from ``burn-in-health.md`` (DCGM, nvidia-smi, nccl-tests, perftest, InfiniBand and fleet
health-check anchors); each module names its own sources.
"""

from hwaac.health.result import Action, Finding, Status, ToolResult

__all__ = ["Action", "Finding", "Status", "ToolResult"]
