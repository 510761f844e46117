"""Resource ``hwaac_ipam_pool``: an address pool as a NetBox container prefix with a prefix role.

Created with the ``hwaac`` tag (and its role created when NetBox has none); or adopted when a person already
recorded the prefix: then hwaac changes nothing of it, ``adopted`` is true, and destroy leaves it in NetBox.
Read shows NetBox's role, site and description, so an edit in NetBox plans an update that puts the declared
values back. Import: ``terraform import hwaac_ipam_pool.NAME <NetBox prefix id>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tf import schema, types
from tf.iface import CreateContext, DeleteContext, ImportContext, ReadContext, UpdateContext

from hwaac.netbox.errors import NetBoxError
from hwaac_provider.common import Resource, diagnosed, object_schema, report
from hwaac_provider.provider import WRITE_LOCK

if TYPE_CHECKING:  # hwaac's NetBox client is imported where used (common.py says why)
    from hwaac.netbox.pools import PoolRecord
    from hwaac.netbox.sync.client import Client

A = schema.Attribute


def _state(rec: PoolRecord, adopted: bool, base: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        **(base or {}),
        "id": str(rec.id),
        "prefix": rec.prefix,
        "role": rec.role,
        "site": rec.site,
        "vrf": rec.vrf,
        "description": rec.description or None,
        "adopted": adopted,
    }


class IpamPool(Resource):
    NAME = "ipam_pool"
    SCHEMA = object_schema(
        A("prefix", types.String(), required=True, requires_replace=True, description="IPv4 prefix (CIDR)"),
        A("role", types.String(), required=True, description="NetBox prefix role slug (IPAM > Roles)"),
        A("site", types.String(), optional=True, description="Site slug the pool is scoped to"),
        A("vrf", types.String(), optional=True, requires_replace=True, description="VRF name (default global)"),
        A("description", types.String(), optional=True),
        A("id", types.String(), computed=True, description="NetBox prefix id"),
        A(
            "adopted",
            types.Bool(),
            computed=True,
            description="True when the prefix was already in NetBox (not created, never deleted by hwaac)",
        ),
        description="An address pool: a NetBox container prefix with a role",
    )

    def validate(self, diags: Any, type_name: str, config: dict[str, Any]) -> None:
        import netaddr

        p = config.get("prefix")
        if isinstance(p, str):
            try:
                net = netaddr.IPNetwork(p)
                ok = "/" in p and net.version == 4 and str(net.cidr) == p
            except (netaddr.AddrFormatError, ValueError):
                ok, net = False, None
            if not ok:
                valid = (
                    f"the network address {net.cidr}"
                    if net is not None and net.version == 4
                    else "an IPv4 prefix in CIDR notation, e.g. 10.0.0.0/16"
                )
                diags.add_error(
                    "prefix is not an IPv4 network in CIDR notation", f"prefix = {p!r}; valid: {valid}", path=["prefix"]
                )

    def plan(self, ctx: Any, current: dict[str, Any] | None, planned: dict[str, Any]) -> dict[str, Any]:
        if current is not None:  # an update keeps what NetBox assigned
            return {**planned, "id": current.get("id"), "adopted": current.get("adopted")}
        return planned

    def _client(self, writes: bool = False) -> Client:
        """A probed client; one that ``writes`` first makes the provider forget its cached reads, one that only
        reads shares the probe (``/api/status/``) and identical reads with the rest of this refresh."""
        from hwaac.netbox.sync.client import Client

        t = self.provider.target()
        if writes:
            self.provider.writing()
        c = Client(t.url, t.token, cache=None if writes else self.provider.reads)
        c.probe()
        return c

    @diagnosed(["prefix"], "pool: ")
    def create(self, ctx: CreateContext, planned: dict[str, Any]) -> dict[str, Any] | None:
        from hwaac.netbox.pools import ensure_pool

        with WRITE_LOCK:
            rec, adopted = ensure_pool(
                self._client(writes=True),
                planned["prefix"],
                planned["role"],
                planned.get("site"),
                planned.get("vrf"),
                planned.get("description"),
            )
        if adopted and (rec.site != planned.get("site") or (rec.description or None) != planned.get("description")):
            ctx.diagnostics.add_warning(
                f"adopted prefix {rec.prefix} (id {rec.id}) as it is in NetBox",
                f"NetBox has site {rec.site!r}, description {rec.description!r}; hwaac does not change a pool a "
                "person recorded. Declare those values to silence this.",
                path=["prefix"],
            )
            return _state(rec, adopted, planned) | {
                "site": planned.get("site"),
                "description": planned.get("description"),
            }
        return _state(rec, adopted, planned)

    def read(self, ctx: ReadContext, current: dict[str, Any]) -> dict[str, Any] | None:
        from hwaac.netbox.pools import get_pool

        try:
            rec = get_pool(self._client(), int(current["id"]))
        except NetBoxError as exc:
            report(ctx.diagnostics, exc, [], "pool: ")
            return current
        if rec is None:
            return None
        if current.get("adopted"):
            return current  # a person's prefix: its other fields are theirs
        return _state(rec, False, current)

    def update(self, ctx: UpdateContext, current: dict[str, Any], planned: dict[str, Any]) -> dict[str, Any]:
        if current.get("adopted"):
            return {**planned, "id": current["id"], "adopted": True}
        from hwaac.netbox.pools import update_pool

        try:
            with WRITE_LOCK:
                rec = update_pool(
                    self._client(writes=True),
                    int(current["id"]),
                    planned["role"],
                    planned.get("site"),
                    planned.get("description"),
                )
        except NetBoxError as exc:
            report(ctx.diagnostics, exc, [], "pool: ")
            return current
        return _state(rec, False, planned)

    def delete(self, ctx: DeleteContext, current: dict[str, Any]) -> None:
        if current.get("adopted"):
            return  # adopted: the prefix stays with whoever recorded it
        from hwaac.netbox.pools import delete_pool

        try:
            with WRITE_LOCK:
                delete_pool(self._client(writes=True), int(current["id"]))
        except NetBoxError as exc:
            report(ctx.diagnostics, exc, [], "pool: ")

    @diagnosed([], "import: ")
    def import_(self, ctx: ImportContext, id: str) -> dict[str, Any] | None:
        if not id.isdigit():
            raise ValueError(f"import id {id!r} is not a NetBox prefix id (a number)")
        from hwaac.netbox.pools import get_pool

        rec = get_pool(self._client(), int(id))
        if rec is None:
            raise ValueError(f"NetBox has no prefix with id {id}")
        return _state(rec, not rec.owned)
