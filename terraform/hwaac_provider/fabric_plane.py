"""Resource ``hwaac_fabric_plane``: one plane of a fabric, recorded in NetBox.

Everything the plane's plan holds — its switches, the GPU nodes cabled to it, interfaces (from device types),
cables, IP addresses, prefixes and ASNs — is written by :func:`hwaac.netbox.sync.sync_plan` scoped to the plane.
The resource is coarse on purpose (never one resource per address or cable): its computed attributes summarise
the plane, so a Terraform plan shows what changes. What plan, apply, read, destroy and import each do:
docs/terraform.md "The resource hwaac_fabric_plane". Planes are numbered from 0, as device names count them
(``leaf-p0-su01-r0`` is in plane 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tf import schema, types
from tf.iface import CreateContext, DeleteContext, ImportContext, PlanContext, ReadContext, UpdateContext
from tf.types import Unknown
from tf.utils import Diagnostics

from hwaac.errors import IntentError
from hwaac.netbox.errors import NetBoxError
from hwaac_provider.common import (
    DeviceMap,
    Resource,
    applied_plan,
    diagnosed,
    is_known,
    object_schema,
    read_intent,
    report,
)
from hwaac_provider.provider import WRITE_LOCK

if TYPE_CHECKING:  # hwaac's planner and NetBox sync are imported where used (common.py says why)
    from hwaac.netbox.plane_state import PlaneState
    from hwaac.plan.model import Plan

A = schema.Attribute


def _flag(name: str, description: str) -> schema.Attribute:
    """An optional boolean argument: an opt-in that is off unless set to true."""
    return A(name, types.Bool(), optional=True, description=description)


class FabricPlane(Resource):
    NAME = "fabric_plane"
    SCHEMA = object_schema(
        A(
            "intent_file",
            types.String(),
            required=True,
            description="Path to the fabric's intent (fabric.yml or its folder), relative to the working folder",
        ),
        A(
            "plane",
            types.Number(),
            required=True,
            requires_replace=True,
            description="Plane number, from 0 (as in device names: leaf-p0-... is in plane 0)",
        ),
        A(
            "pools",
            types.Map(types.String()),
            optional=True,
            description="NetBox prefix role slug -> prefix (CIDR) for pools the intent names by role; roles not "
            "listed are looked up in NetBox",
        ),
        _flag("allow_renumber", "Accept changes of existing switches' loopbacks/ASNs or cables' ends/addresses"),
        _flag("allow_remove", "Accept removing switches, nodes or cables from the plane"),
        _flag(
            "delete_active",
            "Let apply and destroy delete devices NetBox has as active, staged or failed (without it "
            "they stop the sync); devices a person made are released, never deleted",
        ),
        A("id", types.String(), computed=True, description="<fabric>/plane-<n>"),
        A("fabric", types.String(), computed=True, description="Fabric name (intent fabric.name)"),
        A("site", types.String(), computed=True, description="NetBox site slug (intent fabric.site)"),
        A("intent", types.String(), computed=True, description="The intent YAML as applied"),
        A("intent_sha256", types.String(), computed=True, description="SHA-256 of the applied intent text"),
        A(
            "counts",
            types.Map(types.Number()),
            computed=True,
            description="Objects of the plane: devices, switches, gpu_nodes, cables, ip_addresses, prefixes, "
            "asns, asn_ranges",
        ),
        A(
            "pools_used",
            types.Map(types.String()),
            computed=True,
            description="Intent field path -> pool prefix (CIDR)",
        ),
        A("devices", DeviceMap(), computed=True, description="Switch name -> loopback (IPv4) and BGP ASN"),
        A(
            "drift",
            types.List(types.String()),
            computed=True,
            description="Objects where NetBox differs from the applied plan (refresh); empty after apply",
        ),
        description="One plane of a fabric recorded in NetBox (hwaac)",
    )

    # --- validate / plan --------------------------------------------------------------------------------

    def validate(self, diags: Diagnostics, type_name: str, config: dict[str, Any]) -> None:
        plane, path = config.get("plane"), config.get("intent_file")
        if isinstance(plane, int | float) and (plane < 0 or plane != int(plane)):
            diags.add_error(
                "plane must be a whole number from 0",
                f"plane = {plane}; valid: 0 up to the intent's fabric.planes - 1",
                path=["plane"],
            )
        if not isinstance(path, str):
            return
        from hwaac.validate import load_intent_source

        try:
            # without NetBox: pools named by role cannot be resolved here (plan does that); everything else must hold
            load_intent_source(read_intent(path), path)
        except IntentError as exc:
            rest = [i for i in exc.issues if i.rule != "netbox-pool-unresolved"]
            if rest:
                report(diags, IntentError(rest), ["intent_file"])
        except OSError as exc:
            report(diags, exc, ["intent_file"])

    def _import_lookup(self) -> Any:
        """Pools by NetBox role for an import, where the configuration's ``pools`` are not known: the prefix
        with that role at the fabric's site, else (a role the intent names without a site) the one prefix with
        that role at any site, e.g. a pool declared by ``hwaac_ipam_pool`` without a site."""
        provider = self.provider

        def lookup(ref: Any, site: str) -> str:
            from hwaac.netbox.pools import prefix_lookup
            from hwaac.validate import PoolLookupError

            t = provider.target()
            find = prefix_lookup(t.url, t.token)
            try:
                return find(ref, site)
            except PoolLookupError:
                if ref.site:
                    raise
                return find(ref, "")

        return lookup

    def plan(self, ctx: PlanContext, current: dict[str, Any] | None, planned: dict[str, Any]) -> dict[str, Any]:
        if not is_known(planned.get("intent_file"), planned.get("pools"), planned.get("plane")):
            return {**planned, **{k: Unknown for k in COMPUTED}}
        from hwaac.netbox.plane_state import plan_from_text, planned_state

        path, plane = planned["intent_file"], int(planned["plane"])
        try:
            text = read_intent(path)
            new = plan_from_text(text, path, self.provider.pool_lookup(planned.get("pools")))
            st = planned_state(new, plane)
        except (IntentError, OSError) as exc:
            report(ctx.diagnostics, exc, ["intent_file"])
            return planned
        except ValueError as exc:
            report(ctx.diagnostics, exc, ["plane"])
            return planned
        except NetBoxError as exc:
            report(ctx.diagnostics, exc, ["pools"], "pools from NetBox: ")
            return planned
        if current is not None and current.get("intent") and current["intent"] != text:
            self._check_safety(ctx.diagnostics, current, new, plane, planned)
        return {**planned, **_computed(st, text, plane)}

    def _check_safety(
        self, diags: Diagnostics, current: dict[str, Any], new: Plan, plane: int, planned: dict[str, Any]
    ) -> None:
        """Refuse renumbering or removing this plane's existing switches, nodes and cables (``hwaac plan
        --against`` semantics) unless allowed."""
        from hwaac.plan.diff import diff_plans
        from hwaac.plan.serialize import plan_to_dict

        try:
            old = applied_plan(current)
        except (IntentError, NetBoxError, OSError, ValueError):
            return  # the applied intent no longer plans (e.g. an older hwaac); nothing to compare against
        mine = _names(old, plane) | _names(new, plane)
        d = diff_plans(plan_to_dict(old), plan_to_dict(new))
        renumbered = [line for line in d.renumbered if line.split(":")[0].split(" ", 1)[1] in mine]
        removed = [line for line in d.removals if line.split(" ", 1)[1] in mine]
        if renumbered and not planned.get("allow_renumber"):
            diags.add_error(
                f"the intent renumbers {len(renumbered)} existing allocation(s) of plane {plane}",
                "\n".join(renumbered[:50]) + "\nset allow_renumber = true to accept",
                path=["intent_file"],
            )
        if removed and not planned.get("allow_remove"):
            diags.add_error(
                f"the intent removes {len(removed)} switch(es), node(s) or cable(s) of plane {plane}",
                "\n".join(removed[:50]) + "\nset allow_remove = true to accept",
                path=["intent_file"],
            )

    # --- apply ------------------------------------------------------------------------------------------

    def _sync(self, state: dict[str, Any], remove: bool = False) -> None:
        from hwaac.netbox.sync import sync_plan

        plan = applied_plan(state)
        t = self.provider.target()
        with WRITE_LOCK:
            self.provider.writing()
            try:
                sync_plan(
                    plan,
                    t.url,
                    t.token,
                    planes=[int(state["plane"])],
                    remove=remove,
                    delete_active=bool(state.get("delete_active")),
                )
            finally:
                self.provider.writing()

    def create(self, ctx: CreateContext, planned: dict[str, Any]) -> dict[str, Any] | None:
        from hwaac.netbox.sync import SyncConflict

        try:
            self._sync(planned)
        except SyncConflict as exc:
            report(ctx.diagnostics, exc, ["intent_file"], "NetBox conflict: ")
            return None
        except (IntentError, NetBoxError, OSError, ValueError) as exc:
            report(ctx.diagnostics, exc, [], "sync to NetBox failed: ")
            return None  # nothing recorded; the next apply converges (the sync is idempotent)
        return planned

    def update(self, ctx: UpdateContext, current: dict[str, Any], planned: dict[str, Any]) -> dict[str, Any]:
        from hwaac.netbox.sync import SyncConflict

        try:
            self._sync(planned)
            if current.get("fabric") and current["fabric"] != planned["fabric"]:
                self._sync(current, remove=True)  # a renamed fabric is a new fabric: the old one's plane goes
        except SyncConflict as exc:
            report(ctx.diagnostics, exc, ["intent_file"], "NetBox conflict: ")
            return current
        except (IntentError, NetBoxError, OSError, ValueError) as exc:
            report(ctx.diagnostics, exc, [], "sync to NetBox failed: ")
            return current  # the state keeps what was applied before; the next apply converges
        return planned

    def delete(self, ctx: DeleteContext, current: dict[str, Any]) -> None:
        try:
            self._sync(current, remove=True)
        except (IntentError, NetBoxError, OSError, ValueError) as exc:
            report(ctx.diagnostics, exc, [], "removing the plane from NetBox failed: ")

    # --- read / import ----------------------------------------------------------------------------------

    def read(self, ctx: ReadContext, current: dict[str, Any]) -> dict[str, Any] | None:
        if not current.get("intent"):
            return current
        from hwaac.netbox.plane_state import netbox_state

        try:
            plan = applied_plan(current)
            t = self.provider.target()
            st = netbox_state(plan, t.url, t.token, int(current["plane"]), cache=self.provider.reads)
        except (IntentError, NetBoxError, OSError, ValueError) as exc:
            report(ctx.diagnostics, exc, [], "reading the plane from NetBox failed: ")
            return current
        if not any(st.counts.values()):
            return None  # everything was deleted outside Terraform: plan a create
        return {**current, "counts": st.counts, "devices": st.devices, "drift": st.drift}

    @diagnosed([], "import: ")
    def import_(self, ctx: ImportContext, id: str) -> dict[str, Any] | None:
        path, sep, plane_s = id.rpartition("#")
        if not sep or not plane_s.isdigit():
            raise ValueError(f"import id {id!r} is not <intent_file>#<plane>, e.g. ../inventory/demo/fabric.yml#0")
        from hwaac.netbox.plane_state import plan_from_text, planned_state

        text = read_intent(path)
        plan = plan_from_text(text, path, self._import_lookup())
        st = planned_state(plan, int(plane_s))
        state = {
            "intent_file": path,
            "plane": int(plane_s),
            "pools": None,
            "allow_renumber": None,
            "allow_remove": None,
            "delete_active": None,
            **_computed(st, text, plane_s),  # the id keeps the plane as the import id wrote it
        }
        got = self.read(ReadContext(ctx.diagnostics, ctx.type_name), state)  # type: ignore[arg-type]
        if got is None:
            raise ValueError(f"NetBox holds nothing of fabric {st.fabric} plane {plane_s} to import")
        return got


COMPUTED = tuple(a.name for a in FabricPlane.SCHEMA.attributes if a.computed)


def _computed(st: PlaneState, text: str, plane: int | str) -> dict[str, Any]:
    """The computed attributes (:data:`COMPUTED`) of the plane ``st`` planned from the intent ``text``: what plan
    and import both record; ``drift`` is empty, as it is after an apply."""
    from hwaac.netbox.plane_state import intent_sha256

    return {
        "id": f"{st.fabric}/plane-{plane}",
        "fabric": st.fabric,
        "site": st.site,
        "intent": text,
        "intent_sha256": intent_sha256(text),
        "counts": st.counts,
        "pools_used": st.pools_used,
        "devices": st.devices,
        "drift": [],
    }


def _names(plan: Plan, plane: int) -> set[str]:
    """Switches, nodes and cable ids of ``plane`` (0-based), as plan diffs name them."""
    p = plane
    out = {s.name for s in plan.switches if s.plane == p}
    links = [link for link in plan.links if link.plane == p]
    out |= {link.cable_id for link in links}
    out |= {link.a_device for link in links if link.kind == "host"}
    return out
