"""``hwaac.netbox.sync``: record a plan in NetBox with bulk, idempotent writes that respect ownership.

:func:`sync_plan` does one sync (or a dry run); :mod:`.desired` says which objects a plan becomes and
:mod:`.engine` how they are read, diffed and written.
"""

from __future__ import annotations

import os

from hwaac.netbox.errors import NetBoxError
from hwaac.netbox.sync.desired import Desired, desired_state, fabric_tag
from hwaac.netbox.sync.engine import Report, SyncConflict, SyncError, format_report, sync_plan

__all__ = ["Desired", "Report", "SyncConflict", "SyncError", "desired_state", "fabric_tag", "format_report",
           "sync_plan", "target"]


def target(url: str | None = None) -> tuple[str, str]:
    """(url, token): ``url`` or ``NETBOX_URL`` with ``NETBOX_TOKEN``; with neither URL set, the local NetBox when
    it is up. Raises NetBoxError (one line, never the token)."""
    url = url or os.environ.get("NETBOX_URL")
    token = os.environ.get("NETBOX_TOKEN")
    if url:
        if not token:
            raise NetBoxError(f"NETBOX_TOKEN is not set for the NetBox at {url}; export it (it is never printed)")
        return url.rstrip("/"), token
    from hwaac.netbox.local import LocalNetBox

    local = LocalNetBox()
    if not local.status().up:
        raise NetBoxError("no NetBox: set NETBOX_URL and NETBOX_TOKEN, or start the local one with `hwaac netbox up`")
    return local.url, local.token
