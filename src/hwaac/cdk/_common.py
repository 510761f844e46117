"""What every hwaac construct shares: the provider's address and small helpers for synthesized attributes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import cdktn

PROVIDER_NAME = "hwaac"
"""Local name of the provider in ``required_providers`` and the prefix of its resource types."""

PROVIDER_SOURCE = "aiinfra/hwaac"
"""Registry source address of the provider (served from the offline mirror, see ``terraform/``)."""

PROVIDER_VERSION_CONSTRAINT = "~> 0.1"
"""Version constraint written to ``required_providers``. It must be present: without a ``version`` there the
cdktn CLI (``cdktn deploy``/``diff``) dies with a ZodError while reading the synthesized stack."""


def generator_metadata(*, with_version: bool = False) -> cdktn.TerraformProviderGeneratorMetadata:
    """The metadata cdktn uses to tie a resource to its provider (and, for the provider itself, the version)."""
    if with_version:
        return cdktn.TerraformProviderGeneratorMetadata(
            provider_name=PROVIDER_NAME, provider_version_constraint=PROVIDER_VERSION_CONSTRAINT
        )
    return cdktn.TerraformProviderGeneratorMetadata(provider_name=PROVIDER_NAME)


def drop_none(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """``attrs`` without the keys whose value is ``None``: an unset optional argument must not be synthesized
    (Terraform JSON has no "unset", and ``null`` would override the provider's own default or env fallback)."""
    return {k: v for k, v in attrs.items() if v is not None}


def is_token(value: object) -> bool:
    """True when ``value`` is a cdktn token (a reference resolved by Terraform at plan time), so that Python-side
    checks of literal values must skip it."""
    return bool(cdktn.Token.is_unresolved(value))


def meta_arguments(tf_type: str, provider: cdktn.TerraformProvider | None,
                   depends_on: Sequence[cdktn.ITerraformDependable] | None) -> dict[str, Any]:
    """The keyword arguments every hwaac resource and data source passes to its cdktn base class."""
    return {"terraform_resource_type": tf_type, "terraform_generator_metadata": generator_metadata(),
            "provider": provider, "depends_on": depends_on}


class Synthesized:
    """Mixin of the hwaac resources and data sources: what they synthesize is ``_attrs``, set in ``__init__``."""

    _attrs: dict[str, Any]

    def _synthesize_attributes(self) -> dict[str, Any]:
        return self._attrs
