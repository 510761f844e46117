"""Pools from NetBox: resolve an intent's ``{netbox_role: ..., site: ..., vrf: ...}`` to the prefix NetBox holds.

NetBox is the source of truth for address space: a user records the fabric's pools as prefixes with a role
(IPAM > Roles) scoped to the site, and the intent names the role instead of repeating the prefix. Exactly one
prefix must match; none or several is an error naming the role, site and VRF (and the prefixes found).
Query: ``GET /api/ipam/prefixes/?role=<slug>&site=<slug>&vrf_id=null`` (or ``vrf=<name>``), NetBox 4.7 REST API.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import pynetbox
import requests

from hwaac.model.intent import NetBoxPrefixRef
from hwaac.netbox.errors import NetBoxError
from hwaac.netbox.sync.cleanup import cleanup_owner
from hwaac.netbox.sync.client import Client
from hwaac.netbox.sync.desired import OWNER_TAG
from hwaac.netbox.sync.records import tags_of
from hwaac.validate import PoolLookup, PoolLookupError


def prefix_lookup(url: str, token: str, timeout: float = 30.0) -> PoolLookup:
    """A :data:`hwaac.validate.PoolLookup` that asks the NetBox at ``url``; connects on first use.

    Raises (from the lookup): PoolLookupError (no or several prefixes), NetBoxError (unreachable, token refused).
    The token never appears in an error.
    """
    api = pynetbox.api(url, token=token)
    api.http_session.timeout = timeout

    def lookup(ref: NetBoxPrefixRef, fabric_site: str) -> str:
        site = ref.site or fabric_site  # empty: any site (the data source hwaac_netbox_prefix without site)
        params: dict[str, str | int] = {"role": ref.netbox_role, "limit": 50}
        if site:
            params["site"] = site
        if ref.vrf:
            params["vrf"] = ref.vrf
        else:
            params["vrf_id"] = "null"
        table = f"VRF {ref.vrf!r}" if ref.vrf else "the global table"
        where = f"role {ref.netbox_role!r}" + (f" at site {site!r}" if site else "") + f" in {table}"
        try:
            if api.ipam.roles.get(slug=ref.netbox_role) is None:
                raise PoolLookupError(
                    f"NetBox has no prefix role {ref.netbox_role!r}",
                    "the slug of an existing prefix role (IPAM > Roles)",
                )
            if site and api.dcim.sites.get(slug=site) is None:  # NetBox answers 400 to a filter on an unknown site
                raise PoolLookupError(
                    f"NetBox has no site {site!r} for the prefix role {ref.netbox_role!r}",
                    "the slug of an existing site (fabric.site, or site: in the pool)",
                )
            found = [str(p.prefix) for p in api.ipam.prefixes.filter(**params)]
        except pynetbox.RequestError as exc:
            raise NetBoxError(f"NetBox at {url} refused the prefix query (HTTP {exc.req.status_code})") from None
        except requests.RequestException as exc:
            raise NetBoxError(f"NetBox at {url} is unreachable: {type(exc).__name__}") from None
        if not found:
            raise PoolLookupError(
                f"NetBox holds no prefix with {where}",
                f"a prefix with role {ref.netbox_role!r}" + (f" scoped to site {site!r}" if site else ""),
            )
        if len(found) > 1:
            raise PoolLookupError(
                f"NetBox holds {len(found)} prefixes with {where}: {', '.join(sorted(found))}",
                "exactly one prefix per role, site and VRF",
            )
        return found[0]

    return lookup


# --- pools as Terraform's hwaac_ipam_pool declares them ---------------------------------------------------------

POOL_FIELDS = "id,prefix,status,role,scope_type,scope_id,scope,vrf,description,tags"


@dataclass
class PoolRecord:
    """A container prefix as NetBox holds it: ``role``/``site`` are slugs, ``vrf`` a VRF name (None: global);
    ``owned`` when it carries the ``hwaac`` tag (hwaac created it)."""

    id: int
    prefix: str
    role: str | None
    site: str | None
    vrf: str | None
    description: str
    status: str
    owned: bool


def _pool_record(r: dict) -> PoolRecord:
    scope = r.get("scope") if r.get("scope_type") == "dcim.site" else None
    return PoolRecord(
        id=r["id"],
        prefix=r["prefix"],
        role=(r.get("role") or {}).get("slug"),
        site=(scope or {}).get("slug") if isinstance(scope, dict) else None,
        vrf=(r.get("vrf") or {}).get("name"),
        description=r.get("description") or "",
        status=(r.get("status") or {}).get("value", ""),
        owned=OWNER_TAG in tags_of(r),
    )


def find_pool(client: Client, prefix: str, vrf: str | None) -> PoolRecord | None:
    """The prefix ``prefix`` in VRF ``vrf`` (None: the global table), or None."""
    params: dict[str, Any] = {"prefix": prefix}
    if vrf:
        params["vrf"] = vrf
    else:
        params["vrf_id"] = "null"
    recs = client.read("prefixes", POOL_FIELDS, **params)
    return _pool_record(recs[0]) if recs else None


def get_pool(client: Client, pool_id: int) -> PoolRecord | None:
    recs = client.read("prefixes", POOL_FIELDS, id=pool_id)
    return _pool_record(recs[0]) if recs else None


def _ids(client: Client, role: str, site: str | None, vrf: str | None, *, create_role: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    roles = client.read("roles", "id,slug", slug=role)
    if roles:
        out["role"] = roles[0]["id"]
    elif create_role:
        _ensure_owner_tag(client)
        rec = client.call(
            "POST",
            "roles",
            lambda: client.endpoint("roles").create(
                {
                    "name": role,
                    "slug": role,
                    "tags": [{"slug": OWNER_TAG}],
                    "description": "prefix role created by hwaac for a declared pool",
                }
            ),
        )
        out["role"] = rec.id
    else:
        raise NetBoxError(f"NetBox has no prefix role {role!r}")
    if site:
        sites = client.read("sites", "id,slug", slug=site)
        if not sites:
            raise NetBoxError(f"NetBox has no site {site!r}; valid: the slug of an existing site")
        out["scope_type"], out["scope_id"] = "dcim.site", sites[0]["id"]
    else:
        out["scope_type"], out["scope_id"] = None, None
    if vrf:
        vrfs = client.read("vrfs", "id,name", name=vrf)
        if not vrfs:
            raise NetBoxError(f"NetBox has no VRF {vrf!r}; valid: the name of an existing VRF")
        out["vrf"] = vrfs[0]["id"]
    return out


def ensure_pool(
    client: Client, prefix: str, role: str, site: str | None, vrf: str | None, description: str | None
) -> tuple[PoolRecord, bool]:
    """Create the container prefix ``prefix`` with ``role`` (created, tagged ``hwaac``, when NetBox has no such
    role), scoped to ``site``; or adopt the one a person recorded (returned with ``True``): then nothing of it is
    changed, and it must already have ``role``.

    Raises: NetBoxError (site or VRF missing; an existing prefix with another role, naming both; NetBox errors).
    """
    have = find_pool(client, prefix, vrf)
    if have is not None:
        if have.role != role:
            raise NetBoxError(
                f"NetBox already holds prefix {prefix} (id {have.id}) with role {have.role!r}; the "
                f"pool declares role {role!r}: change one of them"
            )
        return have, not have.owned
    body = {
        "prefix": prefix,
        "status": "container",
        "description": description or "",
        "tags": [{"slug": OWNER_TAG}],
        **_ids(client, role, site, vrf, create_role=True),
    }
    _ensure_owner_tag(client)
    rec = client.call("POST", "prefixes", lambda: client.endpoint("prefixes").create(body))
    got = get_pool(client, rec.id)
    assert got is not None
    return got, False


def update_pool(client: Client, pool_id: int, role: str, site: str | None, description: str | None) -> PoolRecord:
    """Set role, site scope and description of pool ``pool_id`` (what the declaration says)."""
    body = {"id": pool_id, "description": description or "", **_ids(client, role, site, None, create_role=True)}
    client.call("PATCH", "prefixes", lambda: client.endpoint("prefixes").update([body]))
    got = get_pool(client, pool_id)
    if got is None:
        raise NetBoxError(f"prefix id {pool_id} disappeared from NetBox during the update")
    return got


def delete_pool(client: Client, pool_id: int) -> None:
    """Delete pool ``pool_id`` when hwaac owns it, and its role when hwaac created that and nothing else uses it.
    Refuses (NetBoxError) a prefix hwaac does not own."""
    have = get_pool(client, pool_id)
    if have is None:
        return
    if not have.owned:
        raise NetBoxError(f"prefix {have.prefix} (id {pool_id}) is not owned by hwaac; it is left in NetBox")
    client.call("DELETE", "prefixes", lambda: client.endpoint("prefixes").delete([pool_id]))
    roles = client.read("roles", "id,slug,prefix_count,vlan_count,tags", slug=have.role) if have.role else []
    for r in roles:
        if not r.get("prefix_count") and not r.get("vlan_count") and OWNER_TAG in tags_of(r):
            client.call("DELETE", "roles", partial(client.endpoint("roles").delete, [r["id"]]))
    cleanup_owner(client)


def _ensure_owner_tag(client: Client) -> None:
    client.ensure(
        "tags",
        "slug",
        {"name": OWNER_TAG, "slug": OWNER_TAG, "color": "9e9e9e", "description": "owned by hwaac (Hardware-as-Code)"},
    )
