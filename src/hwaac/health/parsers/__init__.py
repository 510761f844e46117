"""Parsers of GPU-node tool output: pure functions ``parse_*(raw, *, version=None) -> ToolResult`` subclasses.

One module per tool family; every parser follows the rules in :mod:`hwaac.health.result` (unreadable or
out-of-range means UNKNOWN with a reason, never PASS; exit codes only make a result worse).
"""
