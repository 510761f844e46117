"""Pools from NetBox: resolve an intent's ``{netbox_role: ..., site: ..., vrf: ...}`` to the prefix NetBox holds.

NetBox is the source of truth for address space: a user records the fabric's pools as prefixes with a role
(IPAM > Roles) scoped to the site, and the intent names the role instead of repeating the prefix. Exactly one
prefix must match; none or several is an error naming the role, site and VRF (and the prefixes found).
Query: ``GET /api/ipam/prefixes/?role=<slug>&site=<slug>&vrf_id=null`` (or ``vrf=<name>``), NetBox 4.7 REST API.
"""

from __future__ import annotations

import pynetbox
import requests

from hwaac.model.intent import NetBoxPrefixRef
from hwaac.netbox.errors import NetBoxError
from hwaac.validate import PoolLookup, PoolLookupError


def prefix_lookup(url: str, token: str, timeout: float = 30.0) -> PoolLookup:
    """A :data:`hwaac.validate.PoolLookup` that asks the NetBox at ``url``; connects on first use.

    Raises (from the lookup): PoolLookupError (no or several prefixes), NetBoxError (unreachable, token refused).
    The token never appears in an error.
    """
    api = pynetbox.api(url, token=token)
    api.http_session.timeout = timeout  # type: ignore[attr-defined]

    def lookup(ref: NetBoxPrefixRef, fabric_site: str) -> str:
        site = ref.site or fabric_site
        params: dict[str, str | int] = {"role": ref.netbox_role, "site": site, "limit": 50}
        if ref.vrf:
            params["vrf"] = ref.vrf
        else:
            params["vrf_id"] = "null"
        table = f"VRF {ref.vrf!r}" if ref.vrf else "the global table"
        where = f"role {ref.netbox_role!r} at site {site!r} in {table}"
        try:
            if api.ipam.roles.get(slug=ref.netbox_role) is None:
                raise PoolLookupError(f"NetBox has no prefix role {ref.netbox_role!r}",
                                      "the slug of an existing prefix role (IPAM > Roles)")
            if api.dcim.sites.get(slug=site) is None:  # NetBox answers 400 to a filter on an unknown site
                raise PoolLookupError(f"NetBox has no site {site!r} for the prefix role {ref.netbox_role!r}",
                                      "the slug of an existing site (fabric.site, or site: in the pool)")
            found = [str(p.prefix) for p in api.ipam.prefixes.filter(**params)]
        except pynetbox.RequestError as exc:
            raise NetBoxError(f"NetBox at {url} refused the prefix query (HTTP {exc.req.status_code})") from None
        except requests.RequestException as exc:
            raise NetBoxError(f"NetBox at {url} is unreachable: {type(exc).__name__}") from None
        if not found:
            raise PoolLookupError(f"NetBox holds no prefix with {where}",
                                  f"a prefix with role {ref.netbox_role!r} scoped to site {site!r}")
        if len(found) > 1:
            raise PoolLookupError(f"NetBox holds {len(found)} prefixes with {where}: {', '.join(sorted(found))}",
                                  "exactly one prefix per role, site and VRF")
        return found[0]

    return lookup
