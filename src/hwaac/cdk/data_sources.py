"""The provider's data sources: ``hwaac_netbox_prefix`` (look a pool up in NetBox by role) and
``hwaac_fabric_plan`` (plan an intent without recording anything)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import cdktn
from constructs import Construct

from hwaac.cdk import checks
from hwaac.cdk.common import (
    Synthesized,
    any_map_attribute,
    number_attribute,
    number_map_attribute,
    string_attribute,
    string_map_attribute,
)


class DataHwaacNetboxPrefix(Synthesized, cdktn.TerraformDataSource):
    """``data "hwaac_netbox_prefix"``: the one NetBox prefix with a role (at a site, in a VRF); the read fails
    when NetBox holds none or several.

    Args:
        scope: the stack (or a construct in it).
        id: construct id; the data source name (``data.hwaac_netbox_prefix.<id>``).
        role: slug of the NetBox IPAM role, e.g. ``"fabric-p2p"``.
        site: slug of the site the prefix is scoped to; default: any.
        vrf: name of the VRF; default: the global table.
        provider: a non-default :class:`~hwaac.cdk.HwaacProvider`.
        depends_on: resources to read after (e.g. the :class:`~hwaac.cdk.IpamPool` that creates the prefix).
    """

    TF_TYPE = "hwaac_netbox_prefix"

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        role: str,
        site: str | None = None,
        vrf: str | None = None,
        provider: cdktn.TerraformProvider | None = None,
        depends_on: Sequence[cdktn.ITerraformDependable] | None = None,
    ) -> None:
        super().__init__(scope, id, {"role": role, "site": site, "vrf": vrf}, provider=provider, depends_on=depends_on)

    id = string_attribute("Token: the NetBox prefix id.")

    prefix = string_attribute('Token: the prefix in CIDR notation, e.g. ``"10.1.0.0/20"``.')

    description = string_attribute("Token: the prefix's description in NetBox.")


class DataHwaacFabricPlan(Synthesized, cdktn.TerraformDataSource):
    """``data "hwaac_fabric_plan"``: what an intent plans to (sizes, pools, switch loopbacks and ASNs), computed by
    the provider without writing to NetBox; for outputs and for checks before a :class:`~hwaac.cdk.FabricPlane`.

    Args:
        scope: the stack (or a construct in it).
        id: construct id; the data source name (``data.hwaac_fabric_plan.<id>``).
        intent_file: the fabric's ``fabric.yml``; ``str`` or ``pathlib.Path`` as for
            :class:`~hwaac.cdk.FabricPlane`.
        pools: NetBox prefix role slug -> prefix in CIDR notation, as for :class:`~hwaac.cdk.FabricPlane`.
        plane: restrict the plan to one plane (from 0); default: all planes.
        provider, depends_on: Terraform meta-arguments.

    Raises:
        ValueError, TypeError: for a bad literal ``intent_file``, ``plane`` or ``pools``, as for
            :class:`~hwaac.cdk.FabricPlane`.
    """

    TF_TYPE = "hwaac_fabric_plan"

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        intent_file: str | os.PathLike[str],
        pools: Mapping[str, str] | None = None,
        plane: float | None = None,
        provider: cdktn.TerraformProvider | None = None,
        depends_on: Sequence[cdktn.ITerraformDependable] | None = None,
    ) -> None:
        attrs = checks.intent_arguments(scope, f"data.{self.TF_TYPE}.{id}", intent_file, plane, pools)
        super().__init__(scope, id, attrs, provider=provider, depends_on=depends_on)

    fabric = string_attribute("Token: ``fabric.name``.")

    site = string_attribute("Token: the NetBox site slug (``fabric.site``).")

    planes = number_attribute("Token (number): ``fabric.planes`` of the intent.")

    counts = number_map_attribute(
        "Token (map of numbers): planned objects by kind (keys as :attr:`hwaac.cdk.FabricPlane.counts`)."
    )

    pools_used = string_map_attribute("Token (map of strings): intent field path -> CIDR.")

    devices = any_map_attribute(
        'Token (map of objects): switch name -> ``{loopback: "10.0.0.1/32", asn: 4200100000}``.'
    )
