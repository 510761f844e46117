# Copyright: hwaac maintainers
# Apache-2.0
"""LNet's global settings as ``lnetctl`` names and orders them: one table for the ``aiinfra.hwaac.lnet`` module
(``lnet_plan``) and the intent model (``src/hwaac/model/lnet_globals.py`` is this file, by symlink, so it stays
standard library only and imports nothing of either side)."""

from __future__ import annotations

# ``lnetctl set <name>`` settings, in the order ``global show``/``export`` print them (lnetctl.c jt_show_global;
# max_recovery_ping_interval is 2.16+)
GLOBALS = (
    "numa_range",
    "max_interfaces",
    "discovery",
    "drop_asym_route",
    "retry_count",
    "transaction_timeout",
    "health_sensitivity",
    "recovery_interval",
    "router_sensitivity",
    "response_tracking",
    "recovery_limit",
    "max_recovery_ping_interval",
)
