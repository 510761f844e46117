"""Controller-side logic of the Ansible collection's push to devices: pure functions, no Ansible.

- :mod:`hwaac.apply.sonic_patch`: running CONFIG_DB vs rendered config_db -> an RFC 6902 patch for SONiC's
  generic config updater (``config apply-patch``), scoped to the tables hwaac manages, with per-table diffs and
  the refusal of changes to the management interface and Loopback0;
- :mod:`hwaac.apply.bgp`: FRR's ``show bgp summary json`` -> which expected neighbours are Established (the
  health gate between batches of a rolling push).

Used by the action plugins ``aiinfra.hwaac.sonic_config_db`` and ``aiinfra.hwaac.bgp_sessions``.
"""

from hwaac.apply.bgp import BgpSummary, GateVerdict, bgp_gate, parse_bgp_summary
from hwaac.apply.sonic_patch import (
    OWNED_TABLES,
    UnsafePatchError,
    bgp_neighbors,
    check_patch,
    config_patch,
    managed_tables,
    table_diffs,
    tables_changed,
    target_config,
)

__all__ = [
    "OWNED_TABLES",
    "BgpSummary",
    "GateVerdict",
    "UnsafePatchError",
    "bgp_gate",
    "bgp_neighbors",
    "check_patch",
    "config_patch",
    "managed_tables",
    "parse_bgp_summary",
    "table_diffs",
    "tables_changed",
    "target_config",
]
