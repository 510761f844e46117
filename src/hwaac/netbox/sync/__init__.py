"""``hwaac.netbox.sync``: record a plan in NetBox with bulk, idempotent writes that respect ownership.

:func:`sync_plan` does one sync (or a dry run); :mod:`.desired` says which objects a plan becomes and
:mod:`.engine` how they are read, diffed and written.
"""

from __future__ import annotations

from hwaac.netbox.sync.client import SyncError
from hwaac.netbox.sync.desired import Desired, desired_state, fabric_tag
from hwaac.netbox.sync.engine import sync_plan
from hwaac.netbox.sync.report import Report, SyncConflict, format_report

__all__ = [
    "Desired",
    "Report",
    "SyncConflict",
    "SyncError",
    "desired_state",
    "fabric_tag",
    "format_report",
    "sync_plan",
]
