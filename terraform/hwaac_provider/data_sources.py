"""Data sources: ``hwaac_netbox_prefix`` (find a pool in NetBox by role, site and VRF) and ``hwaac_fabric_plan``
(plan a fabric without writing anything)."""

from __future__ import annotations

from typing import Any

from tf import schema, types
from tf.iface import ReadDataContext

from hwaac_provider.common import DataSource, DeviceMap, diagnosed, object_schema, read_intent

A = schema.Attribute


class NetBoxPrefixData(DataSource):
    """The one prefix NetBox holds with a role (at a site, in a VRF): the pool an intent can name by role."""

    NAME = "netbox_prefix"
    SCHEMA = object_schema(
        A("role", types.String(), required=True, description="NetBox prefix role slug"),
        A("site", types.String(), optional=True, description="Site slug (the prefix's scope)"),
        A("vrf", types.String(), optional=True, description="VRF name (default: the global table)"),
        A("id", types.String(), computed=True),
        A("prefix", types.String(), computed=True, description="The prefix (CIDR)"),
        A("description", types.String(), computed=True),
    )

    @diagnosed(["role"], "")
    def read(self, ctx: ReadDataContext, config: dict[str, Any]) -> dict[str, Any] | None:
        from hwaac.model.intent import NetBoxPrefixRef
        from hwaac.netbox.pools import find_pool, prefix_lookup
        from hwaac.netbox.sync.client import Client

        t = self.provider.target()
        ref = NetBoxPrefixRef(netbox_role=config["role"], site=config.get("site"), vrf=config.get("vrf"))
        site = config.get("site") or ""
        try:
            prefix = prefix_lookup(t.url, t.token)(ref, site)
        except Exception as exc:  # PoolLookupError carries what would be valid
            valid = getattr(exc, "valid", "")
            raise ValueError(f"{exc}" + (f"; valid: {valid}" if valid else "")) from None
        c = Client(t.url, t.token)
        rec = find_pool(c, prefix, config.get("vrf"))
        return {
            **config,
            "id": str(rec.id) if rec else None,
            "prefix": prefix,
            "description": rec.description if rec else "",
        }


class FabricPlanData(DataSource):
    """A fabric's plan, computed from its intent without writing anything: counts, pools, switches."""

    NAME = "fabric_plan"
    SCHEMA = object_schema(
        A("intent_file", types.String(), required=True, description="Path to fabric.yml (or its folder)"),
        A("pools", types.Map(types.String()), optional=True, description="NetBox prefix role -> prefix"),
        A("plane", types.Number(), optional=True, description="Plane (from 0); default: the whole fabric"),
        A("fabric", types.String(), computed=True),
        A("site", types.String(), computed=True),
        A("planes", types.Number(), computed=True, description="Number of planes"),
        A("counts", types.Map(types.Number()), computed=True),
        A("pools_used", types.Map(types.String()), computed=True),
        A("devices", DeviceMap(), computed=True, description="Switch name -> loopback and BGP ASN"),
    )

    @diagnosed(["intent_file"], "")
    def read(self, ctx: ReadDataContext, config: dict[str, Any]) -> dict[str, Any] | None:
        from hwaac.netbox.plane_state import plan_from_text, planned_state

        path = config["intent_file"]
        plan = plan_from_text(read_intent(path), path, self.provider.pool_lookup(config.get("pools")))
        plane = config.get("plane")
        st = planned_state(plan, int(plane) if plane is not None else None)
        return {
            **config,
            "fabric": st.fabric,
            "site": st.site,
            "planes": plan.design.planes,
            "counts": st.counts,
            "pools_used": st.pools_used,
            "devices": st.devices,
        }
