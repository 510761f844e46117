"""Numbers as tools print them, shared by the table parsers."""

from __future__ import annotations

import math


def finite_float(token: str) -> float | None:
    """A printed number (``483.05``, ``62239``, ``1.2e+03``, ``5e-07``); None for ``N/A``, garbage, inf or nan."""
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
