"""Shared pieces of the provider's resources: attribute types, intent loading, errors as diagnostics.

The provider's modules import hwaac's planner, intent model and NetBox client inside the methods that use them:
Terraform starts the provider several times per command, and a start that only asks for the schema (every
command, ``terraform show`` included) then costs a third of the CPU."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from tf import schema
from tf.types import Unknown
from tf.utils import Diagnostics

from hwaac.errors import IntentError
from hwaac.netbox.errors import NetBoxError

if TYPE_CHECKING:  # the planner and the intent model are imported where used: a schema request needs neither
    from hwaac.plan.model import Plan
    from hwaac.validate import PoolLookup
    from hwaac_provider.provider import HwaacProvider

T = TypeVar("T")


class ProviderObject:
    """Base of the provider's resources and data sources: bound to the provider, named :attr:`NAME` (the type
    name without ``hwaac_``), with the attributes of :attr:`SCHEMA`."""

    NAME: ClassVar[str] = ""
    SCHEMA: ClassVar[schema.Schema]

    def __init__(self, provider: HwaacProvider) -> None:
        self.provider = provider

    @classmethod
    def get_name(cls) -> str:
        return cls.NAME

    @classmethod
    def get_schema(cls) -> schema.Schema:
        return cls.SCHEMA


class Resource(ProviderObject):
    """A managed resource: Terraform keeps its state, written with the schema of :func:`object_schema`."""

    def upgrade(self, ctx: Any, version: int, old: dict[str, Any]) -> dict[str, Any]:
        return old  # every state was written at version 0: nothing to convert


class DataSource(ProviderObject):
    """A data source: its arguments are checked when it is read."""

    def validate(self, diags: Any, type_name: str, config: dict[str, Any]) -> None:
        pass


def object_schema(*attributes: schema.Attribute, description: str | None = None) -> schema.Schema:
    """The schema of a resource or data source: ``attributes`` in the order Terraform lists them, at version 0
    (the version Terraform records with a resource's state and hands to :meth:`Resource.upgrade`)."""
    return schema.Schema(version=0, description=description, attributes=list(attributes))


class DeviceMap:
    """Terraform type ``map(object({loopback = string, asn = number}))``: switch name -> loopback and ASN.

    ``tf`` 1.2.0 has no object type (``tf/types.py``); a type is whatever its cty JSON says: the plugin protocol
    carries an attribute's type as cty's JSON form (``Schema.Attribute.type`` in ``tfplugin6.proto``)."""

    def encode(self, value: Any) -> Any:
        return value

    def decode(self, value: Any) -> Any:
        return value

    def semantically_equal(self, a: Any, b: Any) -> bool:
        return bool(a == b)

    def tf_type(self) -> bytes:
        return json.dumps(["map", ["object", {"loopback": "string", "asn": "number"}]]).encode()


def is_known(*values: Any) -> bool:
    """True when no value is Terraform's "known after apply" (also inside maps and lists)."""
    for v in values:
        if v is Unknown:
            return False
        if isinstance(v, Mapping) and not is_known(*v.values()):
            return False
        if isinstance(v, list | tuple) and not is_known(*v):
            return False
    return True


def read_intent(path: str) -> str:
    """The text of the intent file ``path`` (a fabric.yml, or its folder; relative to Terraform's working
    folder), read within hwaac's limits (:func:`hwaac.model.limits.read_text`: a regular UTF-8 file of at most
    1 MiB). Raises OSError naming the file when there is none, IntentError when it breaks a limit."""
    from hwaac.model.limits import read_text

    p = Path(path)
    if p.is_dir():
        p = p / "fabric.yml"
    try:
        return read_text(p)
    except OSError as exc:
        raise OSError(f"cannot read the intent file {path!r} (from {Path.cwd()}): {exc.strerror or exc}") from None


def lookup_from_applied(text: str, source: str, pools_used: Mapping[str, str] | None) -> PoolLookup | None:
    """A pool lookup that answers the NetBox roles of an applied intent from the CIDRs recorded at apply
    (``pools_used``: field path -> CIDR), so state can be re-planned without asking NetBox again."""
    if not pools_used:
        return None
    from hwaac.model.loader import load_intent_text
    from hwaac.netbox.plane_state import pool_lookup_from
    from hwaac.validate import netbox_pool_refs

    intent, _ = load_intent_text(text, source)
    roles = {
        ref.netbox_role: pools_used[".".join(path)]
        for path, ref in netbox_pool_refs(intent)
        if ".".join(path) in pools_used
    }
    return pool_lookup_from(roles, None) if roles else None


def applied_plan(state: Mapping[str, Any]) -> Plan:
    """The plan of the intent recorded in ``state`` (what was applied), without asking NetBox."""
    from hwaac.netbox.plane_state import plan_from_text

    text, source = state["intent"], state.get("intent_file") or "<state>"
    return plan_from_text(text, source, lookup_from_applied(text, source, state.get("pools_used")))


def report(diags: Diagnostics, exc: BaseException, path: list[Any] | None = None, what: str = "") -> None:
    """Add ``exc`` as an error diagnostic: the first line as summary, the rest as detail."""
    if isinstance(exc, IntentError):
        first = exc.issues[0]
        where = f"{first.file}:{first.line}" if first.file else ""
        diags.add_error(f"invalid intent {where}".strip() + f": {first.path}", str(exc), path=path or [])
        return
    text = str(exc)
    head, _, rest = text.partition("\n")
    diags.add_error(f"{what}{head}" if what else head, rest, path=path or [])


def diagnosed(path: list[Any] | None = None, what: str = "") -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Turn hwaac's errors raised by a resource method into Terraform error diagnostics (the method's ctx has
    them); the method then returns None. Other exceptions are bugs and propagate."""

    def wrap(fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def inner(self: Any, ctx: Any, *args: Any) -> Any:
            try:
                return fn(self, ctx, *args)
            except (IntentError, NetBoxError, OSError, ValueError) as exc:
                report(ctx.diagnostics, exc, path, what)
                return None

        return inner

    return wrap
