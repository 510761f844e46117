"""Names of a lab's things: lab names, namespace names, FRR path spaces, the state folders.

A namespace is ``hwl-<lab>-<device>``. Lab names hold no ``-``, so the prefix ``hwl-<lab>-`` belongs to one lab
only (lab ``a`` and lab ``a-b`` could otherwise both own ``hwl-a-b-x``); FRR refuses path spaces with ``/`` or
``.`` (``lib/libfrr.c``, option ``-N``), so neither may appear in a device name either.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from hwaac.lab.errors import LabError

PREFIX = "hwl-"
DEFAULT_STATE_ROOT = "/run/hwaac/lab"
FRR_RUN_DIR = Path("/var/run/frr")  # FRR's state folder; a path space N keeps its sockets in FRR_RUN_DIR/N
LAB_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_]{0,15}$")
DEVICE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
LAB_NAME_VALID = "1 to 16 of a-z, 0-9 and _ (no '-', no '.'), starting with a letter or digit"


def state_root() -> Path:
    """Where the labs' folders are: ``$HWAAC_LAB_STATE_DIR`` or ``/run/hwaac/lab``."""
    return Path(os.environ.get("HWAAC_LAB_STATE_DIR") or DEFAULT_STATE_ROOT)


def check_name(what: str, name: str, pattern: re.Pattern[str], valid: str) -> str:
    """``name`` itself when ``pattern`` matches it.

    Raises:
        LabError: ``<what> <name> is not valid: <valid>``.
    """
    if not pattern.match(name):
        raise LabError(f"{what} {name!r} is not valid: {valid}")
    return name


def check_lab_name(name: str) -> str:
    """The name itself when it is a valid lab name. Raises LabError naming the value and what is valid."""
    return check_name("lab name", name, LAB_NAME_RE, LAB_NAME_VALID)


def default_lab_name(fabric: str) -> str:
    """A lab name from a fabric's name: lower case, only a-z/0-9/_ kept, at most 16 characters."""
    name = re.sub(r"[^a-z0-9_]", "", fabric.lower())[:16]
    return name or "lab"


def check_device_name(device: str) -> str:
    """The device name when a namespace can be named after it (see the module docstring).

    Raises:
        LabError: the name has characters FRR or ``ip netns`` would refuse.
    """
    if not DEVICE_RE.match(device):
        raise LabError(
            f"device name {device!r} cannot name a namespace: valid are 1 to 64 of A-Z, a-z, 0-9, "
            f"'_' and '-', starting with a letter or digit"
        )
    return device


def lab_prefix(lab: str) -> str:
    """The prefix of every namespace (and FRR path space) of lab ``lab``."""
    return f"{PREFIX}{lab}-"


def netns_name(lab: str, device: str) -> str:
    """The namespace of ``device`` in lab ``lab``."""
    return lab_prefix(lab) + check_device_name(device)


def lab_of_netns(netns: str) -> str | None:
    """The lab a namespace name belongs to, or None when it is not a lab's."""
    if not netns.startswith(PREFIX):
        return None
    lab, sep, device = netns[len(PREFIX) :].partition("-")
    return lab if sep and device and LAB_NAME_RE.match(lab) else None
