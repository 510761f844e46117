"""Loading an intent whose pools may name NetBox prefix roles: the one loader the ``hwaac`` commands share."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hwaac.model.intent import Intent, NetBoxPrefixRef
    from hwaac.validate import PoolLookup


def load_fabric(fabric: str | Path) -> Intent:
    """Load and validate an intent; pools that name a NetBox prefix role are resolved against NetBox (connected
    on first need: NETBOX_URL/NETBOX_TOKEN, else the local NetBox)."""
    from hwaac.validate import load_intent

    lookups: list[PoolLookup] = []

    def lookup(ref: NetBoxPrefixRef, site: str) -> str:
        if not lookups:
            from hwaac.netbox.connection import netbox_target
            from hwaac.netbox.pools import prefix_lookup

            target = netbox_target()
            lookups.append(prefix_lookup(target.url, target.token))
        return lookups[0](ref, site)

    return load_intent(fabric, pool_lookup=lookup)
