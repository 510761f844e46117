"""Errors of hwaac's NetBox layer. Messages never carry an API token.

:class:`NetBoxError` lives in :mod:`hwaac.errors`, so that the development NetBox (:mod:`hwaac.devnetbox`,
whose :class:`~hwaac.devnetbox.errors.LocalNetBoxError` is one) can raise it without importing this package.
"""

from __future__ import annotations

from hwaac.errors import NetBoxError

__all__ = ["NetBoxError"]
