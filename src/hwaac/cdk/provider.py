"""The ``hwaac`` provider block (``aiinfra/hwaac``)."""

from __future__ import annotations

from typing import Any

import cdktn
from constructs import Construct

from hwaac.cdk.common import PROVIDER_NAME, PROVIDER_SOURCE, drop_none, generator_metadata


class HwaacProvider(cdktn.TerraformProvider):
    """``provider "hwaac"``: where the provider finds NetBox.

    Both arguments are optional, and leaving them unset is the intended use: the provider then reads
    ``NETBOX_URL`` and ``NETBOX_TOKEN`` from the environment of the ``terraform`` process. Whatever is passed here
    is written verbatim into the synthesized ``cdk.tf.json``, so pass ``token`` only for throw-away test setups;
    a real token belongs in the environment, never in a file that may be committed or archived.

    Args:
        scope: the stack.
        id: construct id (``"hwaac"`` by convention).
        url: NetBox base URL, e.g. ``"https://netbox.example.net"``; default: ``NETBOX_URL``.
        token: NetBox API token (sensitive); default: ``NETBOX_TOKEN``.
        alias: provider alias, for a second NetBox in the same stack (resources select it with ``provider=``).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        url: str | None = None,
        token: str | None = None,
        alias: str | None = None,
    ) -> None:
        super().__init__(
            scope,
            id,
            terraform_resource_type=PROVIDER_NAME,
            terraform_provider_source=PROVIDER_SOURCE,
            terraform_generator_metadata=generator_metadata(with_version=True),
        )
        self._url = url
        self._token = token
        self._alias = alias

    # cdktn's TerraformProvider leaves `alias` to generated subclasses (its own getter returns undefined); jsii
    # calls these Python overrides, so `provider = "hwaac.<alias>"` and the `alias` attribute are synthesized.
    @property
    def alias(self) -> str | None:
        """The provider alias, or ``None`` for the default provider configuration."""
        return self._alias

    @alias.setter
    def alias(self, value: str | None) -> None:
        self._alias = value

    @property
    def url(self) -> str | None:
        """The NetBox URL as passed (``None``: taken from ``NETBOX_URL`` by the provider)."""
        return self._url

    def _synthesize_attributes(self) -> dict[str, Any]:
        return drop_none({"url": self._url, "token": self._token})
