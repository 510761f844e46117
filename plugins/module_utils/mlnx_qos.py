# Copyright: hwaac maintainers
# Apache-2.0
"""Parse ``mlnx_qos -i <netdev>`` output (MLNX_OFED / DOCA-host ``mlnx-tools``).

Standard library only: runs on managed hosts as part of ``aiinfra.hwaac.roce_qos``. The format (trust state,
``dscp2prio`` mapping, PFC table; recorded sample in ``tests/fixtures/tools/mlnx_qos/``, printing code in
Mellanox/mlnx-tools ``python/mlnx_qos``): docs/modules/nic.md, "mlnx_qos". Other lines are ignored; a missing
trust line or PFC table raises :class:`MlnxQosError`.
"""

from __future__ import annotations

import re

_PRIO_LINE_RE = re.compile(r"^prio:(?P<prio>[0-7])\s+dscp:(?P<dscps>[0-9,]*)$")


class MlnxQosError(Exception):
    """mlnx_qos output or a desired value that cannot be understood."""


class QosState:
    """Parsed ``mlnx_qos`` state of one netdev.

    ``trust``: ``"pcp"`` or ``"dscp"`` (``"none"`` is what mlnx_qos prints when unsupported).
    ``dscp2prio``: ``{dscp: priority}`` for all DSCPs listed (only filled when trust is dscp, else ``None``).
    ``pfc``: 8 ints, PFC enabled (1) or not (0) for priorities 0..7.
    ``dcbx``: the ``DCBX mode:`` text. ``cable_len``: int or ``None``.
    """

    def __init__(self) -> None:
        self.trust: str = ""
        self.dscp2prio: dict[int, int] | None = None
        self.pfc: list[int] = []
        self.dcbx: str = ""
        self.cable_len: int | None = None

    def as_dict(self) -> dict[str, object]:
        """JSON-friendly form (dscp2prio keys as strings, as in nic-roce.json)."""
        return {
            "trust": self.trust,
            "pfc": pfc_to_string(self.pfc),
            "dscp2prio": None if self.dscp2prio is None else {str(k): v for k, v in sorted(self.dscp2prio.items())},
            "dcbx": self.dcbx,
            "cable_len": self.cable_len,
        }


def parse_mlnx_qos(text: str) -> QosState:
    """Parse the status that ``mlnx_qos -i IF`` prints (also printed after every set)."""
    st = QosState()
    lines = text.splitlines()
    in_map = False
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        i += 1
        if not s:
            continue
        if s.startswith("Priority trust state is not supported"):
            raise MlnxQosError("mlnx_qos: " + s)
        if s.startswith("DCBX mode:"):
            st.dcbx = s.split(":", 1)[1].strip()
            continue
        if s.startswith("Priority trust state:"):
            st.trust = s.split(":", 1)[1].strip()
            continue
        if s.startswith("dscp2prio mapping:"):
            in_map = True
            st.dscp2prio = {}
            continue
        if in_map:
            m = _PRIO_LINE_RE.match(s)
            if m:
                prio = int(m.group("prio"))
                for d in filter(None, m.group("dscps").split(",")):
                    dscp = int(d)
                    if not 0 <= dscp <= 63:
                        raise MlnxQosError(f"mlnx_qos: DSCP {dscp} out of range in {s!r}")
                    st.dscp2prio[dscp] = prio
                continue
            in_map = False
        if s.startswith("Cable len:"):
            st.cable_len = int(s.split(":", 1)[1].strip())
            continue
        if s.startswith("PFC configuration:"):
            header_line = lines[i] if i < len(lines) else ""
            enabled_line = lines[i + 1] if i + 1 < len(lines) else ""
            header, enabled = header_line.split(), enabled_line.split()
            if header != ["priority"] + [str(p) for p in range(8)]:
                raise MlnxQosError(f"mlnx_qos: unexpected PFC priority header {header_line!r}")
            if enabled[:1] != ["enabled"] or len(enabled) != 9 or any(v not in ("0", "1") for v in enabled[1:]):
                raise MlnxQosError(f"mlnx_qos: unexpected PFC enabled line {enabled_line!r}")
            st.pfc = [int(v) for v in enabled[1:]]
            i += 2
            continue
    if not st.trust:
        raise MlnxQosError("mlnx_qos output has no 'Priority trust state:' line")
    if not st.pfc:
        raise MlnxQosError("mlnx_qos output has no 'PFC configuration:' table")
    if st.trust == "dscp" and st.dscp2prio is None:
        raise MlnxQosError("mlnx_qos output says trust dscp but has no 'dscp2prio mapping:'")
    return st


def parse_pfc(value: object) -> list[int]:
    """``"0,0,0,1,0,0,0,0"`` or ``[0, 0, 0, 1, 0, 0, 0, 0]`` -> 8 ints of 0/1 (the ``mlnx_qos --pfc`` LIST)."""
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",")]
    elif isinstance(value, (list, tuple)):
        parts = [str(p).strip() for p in value]
    else:
        raise MlnxQosError(f"pfc must be a comma-separated string or a list, got {value!r}")
    if len(parts) != 8 or any(p not in ("0", "1") for p in parts):
        raise MlnxQosError(f"pfc must list 8 values of 0 or 1 (priorities 0..7), got {value!r}")
    return [int(p) for p in parts]


def pfc_to_string(pfc: list[int]) -> str:
    """``[0, 0, 0, 1, 0, 0, 0, 0]`` -> ``"0,0,0,1,0,0,0,0"``."""
    return ",".join(str(v) for v in pfc)


def parse_dscp2prio(value: object) -> dict[int, int]:
    """``{"26": 3, "48": 6}`` (nic-roce.json keys are strings) -> ``{26: 3, 48: 6}``, validated 0..63 / 0..7."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MlnxQosError(f"dscp2prio must be a mapping of DSCP to priority, got {value!r}")
    out: dict[int, int] = {}
    for k, v in value.items():
        try:
            dscp, prio = int(k), int(v)
        except (TypeError, ValueError) as exc:
            raise MlnxQosError(f"dscp2prio entry {k!r}: {v!r} is not an integer pair") from exc
        if not 0 <= dscp <= 63 or not 0 <= prio <= 7:
            raise MlnxQosError(f"dscp2prio entry {k!r}: {v!r} out of range (DSCP 0..63, priority 0..7)")
        out[dscp] = prio
    return out
