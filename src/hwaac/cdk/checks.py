"""Checks of literal argument values at construct time, so that a typo fails ``python main.py`` with a message
naming the construct instead of failing ``terraform plan`` later. Tokens (values known only at plan time) pass."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from typing import Any

from constructs import Construct

from hwaac.cdk.common import is_token
from hwaac.cdk.paths import path_from_stack


def cidr(where: str, value: str) -> str:
    """``value`` when it is a network in CIDR notation with no host bits set (``"10.1.0.0/20"``) or a token.

    Raises:
        ValueError: naming ``where`` and the bad value.
    """
    if is_token(value):
        return value
    try:
        ipaddress.ip_network(value, strict=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {value!r} is not a network prefix in CIDR notation ({exc})") from None
    return value


def plane_number(where: str, value: float | None) -> float | None:
    """``value`` when it is ``None``, a token, or a whole number >= 0 (planes count from 0, as device names
    ``leaf-p0-...`` do).

    Raises:
        ValueError: for negative or fractional numbers and for booleans.
    """
    if value is None or is_token(value):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or int(value) != value:
        raise ValueError(f"{where}: plane must be a whole number >= 0 (planes count from 0), got {value!r}")
    return int(value)


def pools(where: str, value: Mapping[str, str] | None) -> dict[str, str] | None:
    """``value`` as a plain dict (NetBox prefix role slug -> CIDR), its literal CIDRs checked; ``None`` stays
    ``None``. Keys and values may be tokens (``{pool.role: pool.prefix}``).

    Raises:
        ValueError: for a literal value that is not a CIDR prefix.
    """
    if value is None or is_token(value):
        return value  # type: ignore[return-value]
    return {k: cidr(f"{where}: pools[{k!r}]", v) for k, v in value.items()}


def intent_file(scope: Construct, value: str | os.PathLike[str]) -> str:
    """The ``intent_file`` attribute for ``value``: a ``str`` is taken as Terraform will read it (relative to the
    stack folder, or absolute, or a token); a ``pathlib.Path`` is a local file and is rewritten relative to the
    stack's output folder (see :mod:`hwaac.cdk.paths`).

    Raises:
        TypeError: for anything else.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return path_from_stack(scope, value)
    raise TypeError(f"intent_file must be a str or a pathlib.Path, got {type(value).__name__}")


def intent_arguments(
    scope: Construct, where: str, file: str | os.PathLike[str], plane: float | None, pool_map: Mapping[str, str] | None
) -> dict[str, Any]:
    """The arguments ``intent_file``, ``plane`` and ``pools`` of a construct that plans an intent
    (:class:`~hwaac.cdk.FabricPlane`, :class:`~hwaac.cdk.DataHwaacFabricPlan`), checked in that order.

    Raises:
        ValueError: ``plane`` is not a whole number >= 0, or a literal ``pools`` value is not a CIDR network.
        TypeError: ``intent_file`` is neither a ``str`` nor a path.
    """
    return {
        "intent_file": intent_file(scope, file),
        "plane": plane_number(where, plane),
        "pools": pools(where, pool_map),
    }
