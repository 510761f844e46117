"""The provider's resources: ``hwaac_ipam_pool`` (a NetBox prefix with a role) and ``hwaac_fabric_plane`` (one
plane of a fabric intent recorded in NetBox). Both are coarse on purpose: one resource per pool or plane, never one
per address or cable."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import cdktn
from constructs import Construct

from hwaac.cdk import checks
from hwaac.cdk.common import (
    Synthesized,
    any_map_attribute,
    boolean_attribute,
    list_attribute,
    number_map_attribute,
    string_attribute,
    string_map_attribute,
)


def _quoted(key: str) -> str:
    """``key`` as a Terraform index expression (``["leaf-0"]``); switch names hold dashes, so no ``.key`` form."""
    return '["' + key.replace("\\", "\\\\").replace('"', '\\"') + '"]'


class IpamPool(Synthesized, cdktn.TerraformResource):
    """``resource "hwaac_ipam_pool"``: one NetBox IPAM prefix with a role, created or adopted by the provider.

    Args:
        scope: the stack (or a construct in it).
        id: construct id; the Terraform resource name (``hwaac_ipam_pool.<id>``).
        prefix: the network in CIDR notation, e.g. ``"172.16.0.0/16"`` (no host bits).
        role: slug of the NetBox IPAM role (IPAM > Roles), e.g. ``"gpu-host-links"``.
        site: slug of the NetBox site the prefix is scoped to; default: none (global).
        vrf: name of the NetBox VRF; default: the global table.
        description: free text shown in NetBox.
        provider: a non-default :class:`~hwaac.cdk.HwaacProvider` (one with an ``alias``).
        depends_on: resources to create first.
        lifecycle: Terraform lifecycle settings, e.g. ``{"prevent_destroy": True}``.

    Raises:
        ValueError: ``prefix`` is a literal that is not a CIDR network.
    """

    TF_TYPE = "hwaac_ipam_pool"

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        prefix: str,
        role: str,
        site: str | None = None,
        vrf: str | None = None,
        description: str | None = None,
        provider: cdktn.TerraformProvider | None = None,
        depends_on: Sequence[cdktn.ITerraformDependable] | None = None,
        lifecycle: cdktn.TerraformResourceLifecycle | dict[str, Any] | None = None,
    ) -> None:
        attrs = {
            "prefix": checks.cidr(f"{self.TF_TYPE}.{id}.prefix", prefix),
            "role": role,
            "site": site,
            "vrf": vrf,
            "description": description,
        }
        super().__init__(scope, id, attrs, provider=provider, depends_on=depends_on, lifecycle=lifecycle)

    id = string_attribute("Token: the NetBox prefix id (a string of digits).")

    prefix = string_attribute("Token: the prefix in CIDR notation, as recorded in NetBox.")

    role = string_attribute(
        "Token: the role slug. Use it as a key of :class:`FabricPlane` ``pools`` so the plane depends on the pool"
        " (Terraform creates the pool first)."
    )

    site = string_attribute("Token: the site slug (empty when the prefix is global).")

    vrf = string_attribute("Token: the VRF name (empty for the global table).")

    adopted = boolean_attribute(
        "Token (bool): true when the prefix existed in NetBox before and the provider adopted it."
    )


class FabricPlane(Synthesized, cdktn.TerraformResource):
    """``resource "hwaac_fabric_plane"``: one plane of a fabric intent recorded in NetBox (devices, cables, IP
    addresses, prefixes and ASNs of that plane), kept in step with the intent file.

    Args:
        scope: the stack (or a construct in it).
        id: construct id; the Terraform resource name (``hwaac_fabric_plane.<id>``).
        intent_file: the fabric's ``fabric.yml``. A ``str`` is written as is and read by the provider relative to
            Terraform's working directory, the stack folder ``<outdir>/stacks/<stack id>/``; a ``pathlib.Path`` is
            a local path (relative to the current directory, or absolute) and is rewritten relative to that folder
            (:func:`hwaac.cdk.paths.path_from_stack`).
        plane: the plane, from 0 (``0`` .. ``fabric.planes - 1``; device ``leaf-p0-...`` is in plane 0).
        pools: NetBox prefix role slug -> prefix in CIDR notation, for intents whose pools name a NetBox role
            (``{netbox_role: gpu-host-links}``); typically ``{pool.role: pool.prefix}`` of :class:`IpamPool`
            resources, which also orders creation. Default: the provider looks roles up in NetBox itself.
        allow_renumber: accept a change of the intent that renumbers existing addresses, ASNs or ports
            (refused by default).
        allow_remove: accept a change that removes devices recorded for this plane (refused by default).
        provider, depends_on, lifecycle: Terraform meta-arguments, as for :class:`IpamPool`.

    Raises:
        ValueError: ``plane`` is not a whole number >= 0, or a literal ``pools`` value is not a CIDR network.
        TypeError: ``intent_file`` is neither a ``str`` nor a path.
    """

    TF_TYPE = "hwaac_fabric_plane"

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        intent_file: str | os.PathLike[str],
        plane: float,
        pools: Mapping[str, str] | None = None,
        allow_renumber: bool | None = None,
        allow_remove: bool | None = None,
        provider: cdktn.TerraformProvider | None = None,
        depends_on: Sequence[cdktn.ITerraformDependable] | None = None,
        lifecycle: cdktn.TerraformResourceLifecycle | dict[str, Any] | None = None,
    ) -> None:
        attrs = checks.intent_arguments(scope, f"{self.TF_TYPE}.{id}", intent_file, plane, pools)
        attrs |= {"allow_renumber": allow_renumber, "allow_remove": allow_remove}
        super().__init__(scope, id, attrs, provider=provider, depends_on=depends_on, lifecycle=lifecycle)

    id = string_attribute("Token: the provider's id of this plane (a string; stable for the life of the resource).")

    fabric = string_attribute("Token: ``fabric.name`` of the intent.")

    site = string_attribute("Token: the NetBox site slug (``fabric.site``).")

    intent = string_attribute("Token: the intent YAML as applied (pools resolved).")

    intent_sha256 = string_attribute("Token: hex SHA-256 of :attr:`intent`; changes whenever the applied intent does.")

    counts = number_map_attribute(
        "Token (map of numbers): objects recorded for this plane by kind: ``devices``, ``switches``, "
        "``gpu_nodes``, ``cables``, ``ip_addresses``, ``prefixes``, ``asns``, ``asn_ranges``."
    )

    def count_of(self, kind: str) -> float:
        """Token (number): one entry of :attr:`counts`, e.g. ``count_of("cables")``."""
        return cdktn.Token.as_number(self.interpolation_for_attribute(f"counts{_quoted(kind)}"))

    pools_used = string_map_attribute(
        "Token (map of strings): intent field path (``addressing.host_links.prefix``) -> the CIDR used."
    )

    devices = any_map_attribute(
        'Token (map of objects): switch name -> ``{loopback: "10.0.0.1/32", asn: 4200100000}``.'
    )

    def device_loopback(self, switch: str) -> str:
        """Token (string): the loopback address of ``switch`` (``devices["<switch>"].loopback``)."""
        return cdktn.Token.as_string(self.interpolation_for_attribute(f"devices{_quoted(switch)}.loopback"))

    def device_asn(self, switch: str) -> float:
        """Token (number): the BGP ASN of ``switch`` (``devices["<switch>"].asn``)."""
        return cdktn.Token.as_number(self.interpolation_for_attribute(f"devices{_quoted(switch)}.asn"))

    drift = list_attribute(
        "Token (list of strings): differences between NetBox and the intent found on the last refresh, one human-"
        "readable line each; empty when NetBox matches."
    )
