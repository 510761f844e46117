# Copyright: hwaac maintainers
# Apache-2.0
"""Parse ``mlxconfig`` (NVIDIA MFT) / ``mstconfig`` (mstflint) output and compare firmware values.

Standard library only: this file runs on managed hosts as part of the ``aiinfra.hwaac.mlxconfig`` module.
The output format (header block, column titles, change and ``RO`` markers, value syntax, ``-E-`` errors, the
``-I-`` reset strings of ``set``; recorded samples in ``tests/fixtures/tools/mlxconfig/``, printing code in
Mellanox/mstflint ``mlxconfig/mlxcfg_ui.cpp``): docs/modules/nic.md, "mlxconfig / mstconfig".

Anything that does not fit this format raises :class:`MlxconfigError`; nothing is skipped silently.
"""

from __future__ import annotations

import re

NEXT_BOOT = "Next Boot"
KNOWN_COLUMNS = ("Default", "Current", "Next Boot", "New")

# "NAME" or "NAME[3]": mlxconfig names are upper-case identifiers with digits and underscores.
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[\d+\])?$")
_INDEXED_RE = re.compile(r"^(?P<base>[A-Za-z_][A-Za-z0-9_]*)\[(?P<index>\d+)\]$")
_ARRAY_RE = re.compile(r"^Array\[(?P<lo>\d+)\.\.(?P<hi>\d+)\]$")
# "True(1)", "ETH(2)", "_256KB(1)", "PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0)"
_NAMED_RE = re.compile(r"^(?P<text>.+)\((?P<num>-?\d+)\)$")
# marker column ("*" or " "), optional "RO" column (MFT >= 4.3x), then name and values
_ROW_RE = re.compile(r"^(?P<star>[* ])?(?P<ro>RO(?=\s)| {2})?\s*(?P<name>\S+)\s+(?P<rest>\S.*)$")


class MlxconfigError(Exception):
    """mlxconfig output that cannot be parsed, or an ``-E-`` error that the tool printed."""


def errors_in(text: str) -> list[str]:
    """The ``-E- ...`` lines of an mlxconfig output, without the prefix (``MlxCfg::printErr``)."""
    return [line.strip()[3:].strip() for line in text.splitlines() if line.strip().startswith("-E-")]


def unknown_params_in(text: str) -> list[str]:
    """Names from ``-E- Unknown Parameter: NAME`` lines (mstflint ``MlxcfgDBManager``; older builds omit the
    colon: ``Unknown Parameter NAME``)."""
    found = []
    for err in errors_in(text):
        m = re.match(r"^Unknown Parameter:?\s+(\S+)", err)
        if m:
            found.append(m.group(1))
    return found


def split_value(raw: str) -> tuple[str | None, int | None]:
    """``"ETH(2)"`` -> ``("ETH", 2)``; ``"8"`` -> ``(None, 8)``; ``"N/A"`` -> ``("N/A", None)``;
    ``"Array[0..7]"`` -> ``("Array[0..7]", None)``; ``"0x10"`` -> ``(None, 16)``."""
    m = _NAMED_RE.match(raw)
    if m:
        return m.group("text"), int(m.group("num"))
    try:
        return None, int(raw, 0)
    except ValueError:
        return raw, None


def array_range(raw: str) -> tuple[int, int] | None:
    """``"Array[0..7]"`` -> ``(0, 7)``; anything else -> ``None``."""
    m = _ARRAY_RE.match(raw)
    return (int(m.group("lo")), int(m.group("hi"))) if m else None


def split_indexed(name: str) -> tuple[str, int | None]:
    """``"NAME[3]"`` -> ``("NAME", 3)``; ``"NAME"`` -> ``("NAME", None)``."""
    m = _INDEXED_RE.match(name)
    return (m.group("base"), int(m.group("index"))) if m else (name, None)


def check_name(name: str) -> None:
    """Raise :class:`MlxconfigError` for a name mlxconfig could not take on its command line."""
    if not _NAME_RE.match(name):
        raise MlxconfigError(f"invalid mlxconfig parameter name {name!r}")


class QueryOutput:
    """A parsed ``mlxconfig q`` / ``-e q`` / ``set`` table.

    ``columns``: the column titles in order, e.g. ``["Default", "Current", "Next Boot"]``.
    ``rows``: ``{name: {column: raw value}}`` in output order, e.g.
    ``{"NUM_OF_VFS": {"Default": "8", "Current": "0", "Next Boot": "0"}}``.
    ``modified``: names printed with the ``*`` marker. ``read_only``: names printed with ``RO``.
    ``device``: the header fields (``{"Device type": "ConnectX6DX", "Device": "0000:ca:00.0:", ...}``).
    ``notes``: lines after the table that are not rows (the ``*`` legend, ``-I-`` lines, the prompt).
    """

    def __init__(self) -> None:
        self.columns: list[str] = []
        self.rows: dict[str, dict[str, str]] = {}
        self.modified: set[str] = set()
        self.read_only: set[str] = set()
        self.device: dict[str, str] = {}
        self.notes: list[str] = []

    def value(self, name: str, column: str = NEXT_BOOT) -> str:
        """The raw value of ``name`` in ``column``; :class:`MlxconfigError` when absent."""
        if name not in self.rows:
            raise MlxconfigError(f"parameter {name} is not in the mlxconfig output")
        if column not in self.rows[name]:
            raise MlxconfigError(f"mlxconfig output has no {column!r} column (columns: {self.columns})")
        return self.rows[name][column]


def _parse_columns(header_rest: str) -> list[str]:
    """``"Default         Current         Next Boot"`` -> ``["Default", "Current", "Next Boot"]``."""
    words = header_rest.split()
    columns: list[str] = []
    i = 0
    while i < len(words):
        if words[i] == "Next" and i + 1 < len(words) and words[i + 1] == "Boot":
            columns.append(NEXT_BOOT)
            i += 2
            continue
        if words[i] not in KNOWN_COLUMNS:
            raise MlxconfigError(f"unknown mlxconfig column title {words[i]!r} in 'Configurations:' header")
        columns.append(words[i])
        i += 1
    if NEXT_BOOT not in columns:
        raise MlxconfigError(f"mlxconfig 'Configurations:' header has no 'Next Boot' column: {header_rest!r}")
    return columns


def parse_query(text: str) -> QueryOutput:
    """Parse the table printed by ``mlxconfig -d DEV [-e] q [NAMES]`` or by ``set`` (before the prompt).

    Raises :class:`MlxconfigError` naming the tool's own ``-E-`` text when there is one, and for a missing
    ``Configurations:`` header or a row whose value count does not match the columns.
    """
    out = QueryOutput()
    in_table = False
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            if in_table and out.rows:
                in_table = False  # the blank line before " Apply new Configuration? ..." ends a set table
            continue
        if stripped.startswith("-E-"):
            raise MlxconfigError(stripped)
        if stripped.startswith("Configurations:"):
            out.columns = _parse_columns(stripped[len("Configurations:") :])
            in_table = True
            continue
        if not in_table:
            key, sep, val = stripped.partition(":")
            if sep and key in ("Device type", "Name", "Description", "Device", "PCI device"):
                out.device[key] = val.strip()
            continue
        if stripped.startswith(("The '*'", "The 'RO'", "Device Firmware does not support", "-I-", "-W-")):
            out.notes.append(stripped)
            continue
        m = _ROW_RE.match(line)
        if not m or not _NAME_RE.match(m.group("name")):
            raise MlxconfigError(f"unparseable mlxconfig row: {line!r}")
        values = m.group("rest").split()
        if len(values) != len(out.columns):
            raise MlxconfigError(
                f"mlxconfig row {m.group('name')} has {len(values)} values for columns {out.columns}: {line!r}"
            )
        name = m.group("name")
        out.rows[name] = {col: values[i] for i, col in enumerate(out.columns)}
        if m.group("star") == "*":
            out.modified.add(name)
        if m.group("ro") == "RO":
            out.read_only.add(name)
    errs = errors_in(text)
    if errs:
        raise MlxconfigError("-E- " + errs[0])
    if not out.columns:
        raise MlxconfigError("mlxconfig output has no 'Configurations:' table")
    return out


RESET_REBOOT = "reboot"
RESET_POWER_CYCLE = "power_cycle"
RESET_SKIPPED = "skipped"

# What loads pending firmware values, weakest first, as the module reports it in ``reset_required``. The order is
# the one the module applies to a single device: a power-cycle hint from mlxconfig is overridden by ``mlxfwreset``
# when the host is declared to need it or a reboot already failed to load the values.
RESET_KINDS = ("none", "reboot", "power_cycle", "mlxfwreset")


def strongest_reset(kinds: list[str]) -> str:
    """The strongest of several ``reset_required`` values (``mlxfwreset > power_cycle > reboot > none``); ``none``
    for an empty list. Raises :class:`MlxconfigError` for a value that is not a reset kind."""
    best = 0
    for kind in kinds:
        if kind not in RESET_KINDS:
            raise MlxconfigError(f"unknown reset kind {kind!r} (kinds: {', '.join(RESET_KINDS)})")
        best = max(best, RESET_KINDS.index(kind))
    return RESET_KINDS[best]


def parse_set_result(text: str) -> tuple[str, str]:
    """What a successful ``mlxconfig -y set`` asked for: ``(kind, message)``.

    ``kind`` is ``"reboot"`` (``-I- Please reboot machine to load new configurations.``), ``"power_cycle"``
    (``-I- Please power cycle machine to load new configurations.``: the MFRL warm-boot reset could not be armed)
    or ``"skipped"`` (``-I- Skipped reset preparation``, MFT >= 4.34, BlueField in DPU mode, where only a host
    power cycle loads the values: k8snetworkplumbingwg/sriov-network-operator#662). Strings from mstflint
    ``GenericCommander::loadConfigurationGetStr``. Raises :class:`MlxconfigError` for ``-E-`` output or when
    neither ``Done!`` nor a reset line is present.
    """
    errs = errors_in(text)
    if errs:
        raise MlxconfigError("-E- " + "; ".join(errs))
    if "Applying... Done!" not in text:
        raise MlxconfigError("mlxconfig set output has no 'Applying... Done!'")
    for line in text.splitlines():
        s = line.strip()
        if not s.startswith("-I-"):
            continue
        msg = s[3:].strip()
        low = msg.lower()
        if "power cycle" in low:
            return RESET_POWER_CYCLE, msg
        if "reboot machine" in low:
            return RESET_REBOOT, msg
        if "skipped reset preparation" in low:
            return RESET_SKIPPED, msg
    raise MlxconfigError("mlxconfig set output has no '-I- ...' line saying how to load the new configuration")


def value_matches(desired: object, raw: str) -> bool:
    """Whether the mlxconfig value ``raw`` (``"ETH(2)"``, ``"True(1)"``, ``"8"``) is the ``desired`` one.

    ``desired`` may be an int (``2``), a bool (``True`` == 1), a numeric string (``"2"``, ``"0x2"``), an enum or
    boolean name (``"ETH"``, ``"true"``: names compare case-insensitively, as mlxconfig accepts them), or the
    full ``"ETH(2)"`` form. ``N/A`` and arrays never match.
    """
    text, num = split_value(raw)
    if raw == "N/A" or array_range(raw):
        return False
    if isinstance(desired, bool):
        return num == int(desired)
    if isinstance(desired, int):
        return num == desired
    if not isinstance(desired, str):
        raise MlxconfigError(f"unsupported mlxconfig value type {type(desired).__name__}: {desired!r}")
    d = desired.strip()
    dm = _NAMED_RE.match(d)
    if dm:
        return num == int(dm.group("num")) and text is not None and text.upper() == dm.group("text").upper()
    try:
        return num == int(d, 0)
    except ValueError:
        return text is not None and text.upper() == d.upper()


def set_token(desired: object) -> str:
    """The value as written in ``NAME=<value>`` on the mlxconfig command line (bools as ``1``/``0``, which
    every mlxconfig accepts; an ``ETH(2)`` form as its number; names and numbers unchanged)."""
    if isinstance(desired, bool):
        return "1" if desired else "0"
    if isinstance(desired, int):
        return str(desired)
    if isinstance(desired, str):
        m = _NAMED_RE.match(desired.strip())
        if m:
            return m.group("num")
        token = desired.strip()
        if not token or any(c.isspace() for c in token) or "=" in token:
            raise MlxconfigError(f"invalid mlxconfig value {desired!r}")
        return token
    raise MlxconfigError(f"unsupported mlxconfig value type {type(desired).__name__}: {desired!r}")
