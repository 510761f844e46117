"""Provider ``hwaac``: which NetBox to talk to, and the resources and data sources it offers.

Configuration (all optional): ``url`` and ``token`` (sensitive) of the NetBox; without them the environment's
``NETBOX_URL`` and ``NETBOX_TOKEN``; without those the machine's local NetBox when it is up (``hwaac netbox up``),
as the ``hwaac`` command does (:func:`hwaac.netbox.connection.netbox_target`). The token is kept in memory only:
it is never written to state, plan output or logs, and every error is scrubbed of it.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from tf import schema, types
from tf.iface import Config
from tf.types import Unknown
from tf.utils import Diagnostics

from hwaac.netbox.connection import Target, netbox_target
from hwaac.netbox.errors import NetBoxError

# One provider process serves every resource of a Terraform run, on up to 10 threads. Writes to one NetBox go
# one at a time: planes share objects (GPU nodes, device types), and two syncs creating the same device type
# at once would collide on its unique slug.
WRITE_LOCK = threading.Lock()


class HwaacProvider:
    """``aiinfra/hwaac``: resources ``hwaac_ipam_pool`` and ``hwaac_fabric_plane``, data sources
    ``hwaac_netbox_prefix`` and ``hwaac_fabric_plan``."""

    def __init__(self) -> None:
        self._url: str | None = None
        self._token: str | None = None
        self._reads: Any = None

    @property
    def reads(self) -> Any:
        """The :class:`~hwaac.netbox.sync.client.ReadCache` of this process's refreshes: Terraform reads every
        plane at once, and the planes of one fabric share most of their reads. Cleared by :meth:`writing`."""
        if self._reads is None:
            from hwaac.netbox.sync.client import ReadCache

            self._reads = ReadCache()
        return self._reads

    def writing(self) -> None:
        """Forget every cached read: a resource is about to write to NetBox (call it holding WRITE_LOCK)."""
        if self._reads is not None:
            self._reads.clear()

    def full_name(self) -> str:
        return "registry.terraform.io/aiinfra/hwaac"

    def get_model_prefix(self) -> str:
        return "hwaac_"

    def get_provider_schema(self, diags: Diagnostics) -> schema.Schema:
        return schema.Schema(
            version=0,
            attributes=[
                schema.Attribute(
                    "url",
                    types.String(),
                    optional=True,
                    description="NetBox base URL, e.g. https://netbox.example.com (env NETBOX_URL)",
                ),
                schema.Attribute(
                    "token",
                    types.String(),
                    optional=True,
                    sensitive=True,
                    description="NetBox API token (env NETBOX_TOKEN); never written to state",
                ),
            ],
        )

    def validate_config(self, diags: Diagnostics, config: Config) -> None:
        url = config.get("url")
        if isinstance(url, str) and not url.startswith(("http://", "https://")):
            diags.add_error(
                "url is not an http(s) URL",
                f"url = {url!r}; valid: http://host[:port] or https://host[:port]",
                path=["url"],
            )

    def configure_provider(self, diags: Diagnostics, config: Config) -> None:
        url, token = config.get("url"), config.get("token")
        self._url = url if isinstance(url, str) and url else None
        self._token = token if isinstance(token, str) and token else None
        if url is Unknown or token is Unknown:
            diags.add_error(
                "provider hwaac: url or token is unknown at plan time",
                "set them from values known before apply (variables, environment)",
            )

    def target(self) -> Target:
        """The NetBox to use. Raises NetBoxError (one line, no token) when none is configured or up."""
        token = self._token or os.environ.get("NETBOX_TOKEN")
        if self._url:
            if not token:
                raise NetBoxError(f"no token for the NetBox at {self._url}: set the provider's token or NETBOX_TOKEN")
            return Target(self._url.rstrip("/"), token)
        return netbox_target()

    def pool_lookup(self, pools: dict[str, str] | None) -> Any:
        """A :data:`hwaac.validate.PoolLookup` for intents that name pools by NetBox role: ``pools`` (role slug ->
        CIDR, from the configuration) first, then this provider's NetBox (read only, connected on first use)."""
        from hwaac.netbox.plane_state import pool_lookup_from

        def from_netbox(ref: Any, site: str) -> str:
            from hwaac.netbox.pools import prefix_lookup

            t = self.target()
            return prefix_lookup(t.url, t.token)(ref, site)

        return pool_lookup_from(pools, from_netbox)

    def get_resources(self) -> list[Any]:
        from hwaac_provider.fabric_plane import FabricPlane
        from hwaac_provider.ipam_pool import IpamPool

        return [IpamPool, FabricPlane]

    def get_data_sources(self) -> list[Any]:
        from hwaac_provider.data_sources import FabricPlanData, NetBoxPrefixData

        return [NetBoxPrefixData, FabricPlanData]

    def get_functions(self) -> list[Any]:
        return []

    def new_resource(self, klass: Any) -> Any:
        return klass(self)

    def new_data_source(self, klass: Any) -> Any:
        return klass(self)

    def new_function(self, klass: Any) -> Any:
        return klass(self)
