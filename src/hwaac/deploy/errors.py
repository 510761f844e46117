"""Errors of ``hwaac deploy``."""

from __future__ import annotations


class DeployError(Exception):
    """A deploy that could not run or finish; the message names what and why."""


class DeployUsageError(DeployError):
    """Bad input (nothing was run): the message names the argument, its value and what is valid."""
