"""The XID action table: what NVIDIA says to do about each driver XID, folded into hwaac's :class:`Action` ladder.

The formats, sources and rules in full: ``docs/health-modules.md``, section "XID actions".
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from hwaac.health.result import Action, Status

_CATALOG = "data/xid_catalog.yml"


@dataclass(frozen=True, slots=True)
class XidInfo:
    """What to do about one XID.

    Attributes:
        xid: the XID number.
        mnemonic: NVIDIA's name (``ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS``); "" when unlisted or unnamed.
        nvidia_action: the action column as NVIDIA wrote it (``RESTART_BM``, ``WORKFLOW_XID_48``...).
        action: the hwaac action it folds into.
        fatal: NVIDIA's FATAL flag (False when unlisted).
        status: FAIL (fatal), WARN (non-fatal) or UNKNOWN (unlisted).
        listed: whether the table lists the XID.
    """

    xid: int
    mnemonic: str
    nvidia_action: str
    action: Action
    fatal: bool
    status: Status
    listed: bool = True

    @property
    def code(self) -> str:
        """The fault code of findings about this XID: ``GPU_XID_<n>``."""
        return f"GPU_XID_{self.xid}"


@functools.cache
def _catalog() -> dict[str, Any]:
    text = resources.files("hwaac.health").joinpath(_CATALOG).read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    if not isinstance(data, dict) or not isinstance(data.get("xids"), dict):
        raise ValueError(f"{_CATALOG}: no 'xids' mapping")
    return data


@functools.cache
def xid_table() -> dict[int, XidInfo]:
    """Every listed XID as an :class:`XidInfo`, keyed by number.

    Raises:
        ValueError: the packaged catalog maps an NVIDIA action to no known :class:`Action`.
    """
    data = _catalog()
    action_map = {str(k): Action(v) for k, v in data["action_map"].items()}
    table: dict[int, XidInfo] = {}
    for xid, row in data["xids"].items():
        nvidia_action = str(row["nvidia_action"])
        if nvidia_action not in action_map:
            raise ValueError(f"{_CATALOG}: XID {xid}: action {nvidia_action!r} not in action_map")
        fatal = bool(row["fatal"])
        table[int(xid)] = XidInfo(
            xid=int(xid),
            mnemonic=str(row["mnemonic"] or ""),
            nvidia_action=nvidia_action,
            action=action_map[nvidia_action],
            fatal=fatal,
            status=Status.FAIL if fatal else Status.WARN,
        )
    return table


def xid_action(xid: int) -> XidInfo:
    """The :class:`XidInfo` of ``xid``; for an unlisted XID one with status UNKNOWN and action RETEST."""
    info = xid_table().get(xid)
    if info is not None:
        return info
    return XidInfo(xid, "", "", Action.RETEST, False, Status.UNKNOWN, listed=False)


def catalog_source() -> dict[str, str]:
    """Where the table was transcribed from: ``{"repository", "path", "commit"}``."""
    return {k: str(v) for k, v in _catalog()["source"].items()}


@functools.cache
def benign_sxids() -> frozenset[int]:
    """SXid numbers known to be harmless (allow-list; sources in the catalog YAML)."""
    return frozenset(int(x) for x in _catalog()["benign_sxids"])


def is_benign_sxid(sxid: int) -> bool:
    """Whether the NVSwitch SXid ``sxid`` is on the benign allow-list."""
    return sxid in benign_sxids()


# GPU recovery actions as nvidia-smi prints them (-q: "GPU Recovery Action", XML <gpu_recovery_action>) and as the
# driver writes them in XID 154 ("... from 0x0 (None) to 0x4 (Drain and Reset)"); NVML nvmlDeviceGpuRecoveryAction_t
# 0 NONE, 1 GPU_RESET, 2 NODE_REBOOT, 3 DRAIN_P2P, 4 DRAIN_AND_RESET. Drain P2P and Drain and Reset both need the
# GPU's work drained first; hwaac drains the whole node, so both fold into RESET_GPU.
_RECOVERY = {
    "none": Action.NONE,
    "reset": Action.RESET_GPU,
    "gpu reset": Action.RESET_GPU,
    "node reboot": Action.REBOOT,
    "drain p2p": Action.RESET_GPU,
    "drain and reset": Action.RESET_GPU,
}
_RECOVERY_CODES = {0: Action.NONE, 1: Action.RESET_GPU, 2: Action.REBOOT, 3: Action.RESET_GPU, 4: Action.RESET_GPU}


def recovery_action(text: str) -> Action | None:
    """The :class:`Action` for a GPU recovery action written as a name or an NVML code; None when not recognised.

    Accepts ``None``, ``Reset``, ``Node Reboot``, ``Drain P2P``, ``Drain and Reset`` (any case), ``0x4`` or ``4``,
    and ``0x4 (Drain and Reset)``.
    """
    value = text.strip()
    named = re.fullmatch(r"(0x[0-9a-fA-F]+|\d+)\s*\((.*)\)", value)
    if named:
        return recovery_action(named.group(2))
    if value.lower() in _RECOVERY:
        return _RECOVERY[value.lower()]
    if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", value):
        return _RECOVERY_CODES.get(int(value, 0))
    return None
