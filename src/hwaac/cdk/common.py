"""What every hwaac construct shares: the provider's address and small helpers for synthesized attributes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, ClassVar, overload

import cdktn
from constructs import Construct

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


class Synthesized:
    """Mixin of the hwaac resources and data sources, listed before their cdktn base class
    (``cdktn.TerraformResource`` or ``cdktn.TerraformDataSource``): a construct of type ``TF_TYPE``."""

    TF_TYPE: ClassVar[str]
    _attrs: dict[str, Any]

    def __init__(self, scope: Construct, id: str, attrs: Mapping[str, Any], **meta: Any) -> None:
        """Add the construct to ``scope``; it synthesizes ``attrs`` (the arguments as checked), less those that
        are ``None``. ``meta``: Terraform's meta-arguments (``provider``, ``depends_on``, ``lifecycle``)."""
        super().__init__(  # type: ignore[call-arg]  # the cdktn base class, next after this mixin
            scope,
            id,
            terraform_resource_type=self.TF_TYPE,
            terraform_generator_metadata=generator_metadata(),
            **meta,
        )
        self._attrs = drop_none(attrs)

    def _synthesize_attributes(self) -> dict[str, Any]:
        return self._attrs


class Attribute[T](property):
    """A read-only token attribute of a resource or data source: the Python name it is bound to is the Terraform
    attribute name, read with the cdktn getter of its type (see the factories below)."""

    def __init__(self, getter: str, doc: str) -> None:
        super().__init__(self._read, doc=doc)
        self._getter = getter
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def _read(self, construct: Any) -> T:
        return getattr(construct, self._getter)(self._name)

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Attribute[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        return super().__get__(instance, owner)


# One factory per cdktn getter: ``fabric = string_attribute("Token: ...")`` in a class body.
string_attribute: Callable[[str], Attribute[str]] = partial(Attribute, "get_string_attribute")
number_attribute: Callable[[str], Attribute[float]] = partial(Attribute, "get_number_attribute")
boolean_attribute: Callable[[str], Attribute[cdktn.IResolvable]] = partial(Attribute, "get_boolean_attribute")
list_attribute: Callable[[str], Attribute[list[str]]] = partial(Attribute, "get_list_attribute")
string_map_attribute: Callable[[str], Attribute[Mapping[str, str]]] = partial(Attribute, "get_string_map_attribute")
number_map_attribute: Callable[[str], Attribute[Mapping[str, float]]] = partial(Attribute, "get_number_map_attribute")
any_map_attribute: Callable[[str], Attribute[Mapping[str, Any]]] = partial(Attribute, "get_any_map_attribute")
