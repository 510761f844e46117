# Copyright: hwaac maintainers
# Apache-2.0
"""Parse ``scontrol show node`` output and decide Slurm drain/resume with reason ownership.

Standard library only: this file runs on the Slurm controller or login host as part of the
``aiinfra.hwaac.slurm_node`` module. The output format (recorded samples in ``tests/fixtures/slurm/``; printing
code in SchedMD/slurm ``src/api/node_info.c``): docs/modules/slurm.md. hwaac changes the reason of, and resumes,
only nodes whose reason starts with :data:`SLURM_REASON_PREFIX`.
"""

from __future__ import annotations

import re

# Mirrors hwaac.health.lifecycle.SLURM_REASON_PREFIX (the controller-side rule; host modules cannot import hwaac).
# tests/unit/ansible/test_slurm_parse.py checks that both agree.
SLURM_REASON_PREFIX = "hwaac:"

# Flags in the order Slurm prints them (SchedMD/slurm src/common/slurm_protocol_defs.c ``node_state_flags``).
FLAG_ORDER = (
    "CLOUD",
    "COMPLETING",
    "DRAIN",
    "DYNAMIC_FUTURE",
    "DYNAMIC_NORM",
    "INVALID_REG",
    "FAIL",
    "MAINTENANCE",
    "POWER_DOWN",
    "POWER_UP",
    "PERFCTRS",
    "POWERED_DOWN",
    "REBOOT_REQUESTED",
    "REBOOT_ISSUED",
    "RESERVED",
    "RESUME",
    "NOT_RESPONDING",
    "PLANNED",
    "POWERING_UP",
    "POWERING_DOWN",
)
# Suffix characters of the short state names (``node_state_string``): * not responding, ~ powered down, # powering
# up, % powering down, ! power down pending, $ maintenance, @ reboot requested, ^ reboot issued, - planned.
_SUFFIXES = "*~#%!$@^-+"
# Fields Slurm prints after Reason=; they end a Reason that has no [user@time] marker.
_AFTER_REASON = ("Comment", "Extra", "InstanceId", "InstanceType", "ReservationName")
_KEY_RE = re.compile(r"(?:(?<=\s)|^)(?P<key>[A-Za-z][A-Za-z0-9_]*)=")
_AFTER_RE = r"\s+(?:" + "|".join(_AFTER_REASON) + r")="
# " [user@time]" that ends the reason: followed by the end of the record or by a field printed after Reason=
_MARKER_RE = re.compile(r" \[(?P<user>[^\s\[\]@]+)@(?P<time>[^\[\]]+)\](?=\s*$|" + _AFTER_RE + ")")
_NOT_FOUND_RE = re.compile(r"^Node (?P<name>\S+) not found\s*$", re.MULTILINE)


class SlurmError(Exception):
    """scontrol output that cannot be parsed, or a reason Slurm could not store."""


def owns_reason(reason: str | None) -> bool:
    """Whether a drain reason is hwaac's (same rule as ``hwaac.health.lifecycle.owns_reason``)."""
    return bool(reason) and reason.strip().startswith(SLURM_REASON_PREFIX)


def hwaac_reason(reason: str) -> str:
    """The reason as hwaac stores it: ``"GPU 3 XID 79"`` -> ``"hwaac: GPU 3 XID 79"``; a reason that already
    starts with ``hwaac:`` is kept. Raises :class:`SlurmError` for an empty reason or one with a line break or
    control character (Slurm splits a reason on line breaks when it prints it)."""
    text = (reason or "").strip()
    if not text:
        raise SlurmError("a drain reason is required")
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise SlurmError(f"the drain reason must be one line without control characters: {reason!r}")
    if not text.startswith(SLURM_REASON_PREFIX):
        text = f"{SLURM_REASON_PREFIX} {text}"
    if text == SLURM_REASON_PREFIX:
        raise SlurmError("a drain reason needs text after the hwaac: prefix")
    return text


def not_found_in(text: str) -> str | None:
    """The node name from ``Node NAME not found`` (scontrol ``scontrol_print_node``), else ``None``."""
    m = _NOT_FOUND_RE.search(text)
    return m.group("name") if m else None


class SlurmState:
    """A parsed ``State=`` value: ``base`` (``IDLE``, ``MIXED``, ``ALLOCATED``, ``DOWN``, ... without a suffix),
    ``flags`` (``["DRAIN", "REBOOT_REQUESTED"]``), ``suffixes`` (suffix characters of the old short forms) and
    the raw text."""

    def __init__(self, raw: str) -> None:
        self.raw = raw.strip()
        if not self.raw:
            raise SlurmError("empty State= value")
        parts = self.raw.split("+")
        base = parts[0]
        self.suffixes = ""
        while base and base[-1] in _SUFFIXES:
            self.suffixes = base[-1] + self.suffixes
            base = base[:-1]
        self.base = base.upper()
        self.flags = []
        for part in parts[1:]:
            flag = part.upper()
            while flag and flag[-1] in _SUFFIXES:
                self.suffixes += flag[-1]
                flag = flag[:-1]
            if flag:
                self.flags.append(flag)
        if not self.base:
            raise SlurmError(f"unparseable State= value {raw!r}")

    @property
    def drain(self) -> bool:
        """DRAIN flag, or the old ``DRAINED``/``DRAINING`` names."""
        return "DRAIN" in self.flags or self.base in ("DRAIN", "DRAINED", "DRAINING")

    @property
    def down(self) -> bool:
        return self.base == "DOWN"

    @property
    def fail(self) -> bool:
        return "FAIL" in self.flags or self.base in ("FAIL", "FAILING")

    @property
    def offline(self) -> bool:
        """Drained, down or failed: out of service with a reason someone gave."""
        return self.drain or self.down or self.fail

    @property
    def reboot_pending(self) -> bool:
        """A reboot is requested or issued: ``REBOOT_REQUESTED``/``REBOOT_ISSUED`` flags, an old ``REBOOT`` base
        (``REBOOT*+DRAIN``) or the ``@``/``^`` suffixes (``MIXED@``, ``DRAINED^``). Resuming such a node cancels
        the reboot (LBNL NHC ``node-mark-online``: "Onlining a node will cancel a pending reboot")."""
        return (
            any(f.startswith("REBOOT") for f in self.flags)
            or self.base.startswith("REBOOT")
            or "@" in self.suffixes
            or "^" in self.suffixes
        )

    @property
    def not_responding(self) -> bool:
        return "NOT_RESPONDING" in self.flags or "*" in self.suffixes


def _ordered(flags: list[str]) -> list[str]:
    known = [f for f in FLAG_ORDER if f in flags]
    return known + [f for f in flags if f not in FLAG_ORDER]


def predict_drained(raw_state: str) -> str:
    """The ``State=`` Slurm shows after ``State=DRAIN``: the DRAIN flag added in Slurm's flag order
    (``IDLE`` -> ``IDLE+DRAIN``, ``DOWN+CLOUD`` -> ``DOWN+CLOUD+DRAIN``); unchanged when already drained."""
    st = SlurmState(raw_state)
    if st.drain:
        return st.raw
    base = st.raw.split("+")[0]
    return "+".join([base, *_ordered([*st.flags, "DRAIN"])])


def predict_resumed(raw_state: str) -> str:
    """The ``State=`` Slurm shows after ``State=RESUME``: DRAIN and FAIL cleared, a DOWN base back to IDLE
    (``MIXED+DRAIN`` -> ``MIXED``, ``DOWN+DRAIN`` -> ``IDLE``); the old ``DRAINED``/``DRAINING`` names become
    ``IDLE``/``ALLOCATED``."""
    st = SlurmState(raw_state)
    base = st.raw.split("+")[0]
    bare = st.base
    if bare in ("DOWN", "DRAINED", "DRAIN", "FAIL"):
        base = "IDLE"
    elif bare in ("DRAINING", "FAILING"):
        base = "ALLOCATED"
    flags = [f for f in st.flags if f not in ("DRAIN", "FAIL")]
    return "+".join([base, *_ordered(flags)])


class SlurmNode:
    """One node record: ``name``, ``state`` (:class:`SlurmState`), ``reason`` (text without the marker, ``""``
    when none), ``reason_user``, ``reason_time`` and every ``fields`` value as printed (``Reason`` holds the full
    text with the marker)."""

    def __init__(self, fields: dict[str, str], reason: str, reason_user: str, reason_time: str) -> None:
        self.fields = fields
        self.name = fields["NodeName"]
        if "State" not in fields:
            raise SlurmError(f"node {self.name}: no State= in the scontrol output")
        self.state = SlurmState(fields["State"])
        self.reason = reason
        self.reason_user = reason_user
        self.reason_time = reason_time

    @property
    def owner(self) -> str:
        """``none`` (in service), ``hwaac`` (out of service with an hwaac reason) or ``other``."""
        if not self.state.offline:
            return "none"
        return "hwaac" if owns_reason(self.reason) else "other"


def _split_reason(record: str) -> tuple[str, str, str, str, str]:
    """Cut ``Reason=...`` out of a one-line record: ``(record without it, reason text, full value, user, time)``.
    The reason ends at its ``[user@time]`` marker, else before the next field Slurm prints after it."""
    m = re.search(r"(?:(?<=\s)|^)Reason=", record)
    if not m:
        return record, "", "", "", ""
    start, rest = m.start(), record[m.end() :]
    marker = _MARKER_RE.search(rest)
    if marker:
        end = marker.end()
        text, user, when = rest[: marker.start()], marker.group("user"), marker.group("time")
    else:
        ends = [e.start() for e in re.finditer(_AFTER_RE, rest)]
        end = min(ends) if ends else len(rest)
        text, user, when = rest[:end], "", ""
    full = rest[:end].strip()
    return record[:start] + " " + rest[end:], text.strip(), full, user, when


def _parse_record(record: str) -> SlurmNode:
    rest, reason, full, user, when = _split_reason(record)
    keys = list(_KEY_RE.finditer(rest))
    if not keys or keys[0].group("key") != "NodeName":
        raise SlurmError(f"scontrol node record does not start with NodeName=: {record[:80]!r}")
    fields: dict[str, str] = {}
    for i, k in enumerate(keys):
        end = keys[i + 1].start() if i + 1 < len(keys) else len(rest)
        fields[k.group("key")] = rest[k.end() : end].strip()
    if full:
        fields["Reason"] = full
    return SlurmNode(fields, reason, user, when)


def parse_show_node(text: str) -> list[SlurmNode]:
    """Every node record of ``scontrol show node [-o] [NAME]``, in output order.

    Lines that start with ``NodeName=`` begin a record; any other non-empty line continues the current one
    (the multi-line form, whose fields are indented by three spaces, becomes the ``-o`` form). Raises
    :class:`SlurmError` for text that is not node records (``slurm_load_node error: ...``, ``Node X not found``).
    """
    records: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("NodeName="):
            records.append(line.rstrip())
        elif records:
            records[-1] += " " + line.strip()
        else:
            raise SlurmError(f"unexpected scontrol output: {line.strip()!r}")
    return [_parse_record(r) for r in records]


def find_node(text: str, name: str) -> SlurmNode:
    """The record of ``name`` in ``scontrol show node -o NAME`` output; :class:`SlurmError` naming the node when
    scontrol said it was not found or printed no record for it."""
    missing = not_found_in(text)
    if missing:
        raise SlurmError(f"Node {missing} not found")
    for node in parse_show_node(text):
        if node.name == name:
            return node
    raise SlurmError(f"scontrol printed no record for node {name}")
