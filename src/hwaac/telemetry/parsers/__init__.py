"""Readers of switch and host network outputs. Each returns facts in the shapes of :mod:`hwaac.telemetry.model`
and never raises: what it cannot read is a reason in ``unknown``; a value it cannot trust is ``None``."""
