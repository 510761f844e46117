# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Lustre client tunables on the managed host: ``lctl get_param`` output, the client version, and persistence
(2.17+ ``/etc/lustre/mount.client.params``; before 2.17 a systemd oneshot unit bound to the mount unit).

Standard library only (host side); used by ``aiinfra.hwaac.lustre_tune``. The formats of ``lctl
get_param``/``set_param`` and ``version``, ``mount.client.params``, systemd unit-name escaping and ExecStart=
quoting, and why ``max_rpcs_in_flight`` patterns are set first, with their sources: docs/modules/lustre.md,
"Client tunables".
"""

from __future__ import annotations

import re

PARAM_LINE_RE = re.compile(r"^(?P<name>[A-Za-z0-9_][A-Za-z0-9_.\-@*\[\]]*)=(?P<value>.*)$")
PATTERN_RE = re.compile(r"^[A-Za-z0-9_*?\[\]\-@.]+$")
VERSION_RE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?")
PERSIST_FILE_VERSION = (2, 17)
BLOCK_BEGIN = "# BEGIN hwaac lustre_tune {fsname}"
BLOCK_END = "# END hwaac lustre_tune {fsname}"


class ParamError(Exception):
    """Bad input or unreadable output; the message names the field, the value and what is valid."""


def parse_get_param(text: str) -> dict[str, str]:
    """``lctl get_param PATTERN`` output -> {parameter name: value}. Multi-line values (``NAME=`` then lines) are
    kept with their newlines, without the trailing one."""
    out: dict[str, str] = {}
    name = None
    lines: list[str] = []
    for line in text.splitlines():
        m = PARAM_LINE_RE.match(line)
        if m and not line.startswith(" "):
            if name is not None:
                out[name] = "\n".join(lines).rstrip("\n")
            name = m.group("name")
            lines = [m.group("value")] if m.group("value") else []
        elif name is not None:
            lines.append(line)
    if name is not None:
        out[name] = "\n".join(lines).rstrip("\n")
    return out


def parse_version(text: str) -> tuple[tuple[int, ...], str]:
    """The Lustre version from ``lctl get_param -n version`` (any of the layouts above) -> ((2, 15, 5), '2.15.5');
    a vendor suffix is dropped (``2.14.0_ddn98`` -> (2, 14, 0)). Raises :class:`ParamError` when no line holds a
    version."""
    for line in (text or "").splitlines():
        s = line.strip()
        if not s:
            continue
        if ":" in s:
            key, _sep, val = s.partition(":")
            if key.strip().lower() not in ("lustre", "version", "lustre version"):
                continue
            s = val.strip()
        if s.startswith("version="):
            s = s[len("version=") :]
        m = VERSION_RE.match(s)
        if m:
            nums = tuple(int(g) for g in m.groups() if g is not None)
            return nums, m.group(0)
    raise ParamError(f"cannot read a Lustre version from {text.strip()[:200]!r} (expected for example 2.15.5)")


def version_tuple(text: str, where: str = "client_version") -> tuple[int, ...]:
    """A version given as an option, ``MAJOR.MINOR[.PATCH[.FIX]]`` (Lustre's release numbering: 2.15.5) ->
    ``(2, 15, 5)``. Raises :class:`ParamError` naming ``where``, the value and what is valid."""
    m = VERSION_RE.fullmatch(str(text).strip())
    if not m:
        raise ParamError(f"{where}: {text!r} is not a Lustre version (expected MAJOR.MINOR[.PATCH], e.g. 2.15.5)")
    return tuple(int(g) for g in m.groups() if g is not None)


def check_params(params, fsname: str | None = None) -> tuple[dict[str, str], list[str]]:
    """Validate ``{pattern: value}``: patterns are dot-separated lctl parameter names with glob characters, values
    one-line strings or numbers (booleans become 0/1, ``64.0`` becomes ``64``). Returns ``(params with string
    values, warnings)``; a warning names each pattern that is not scoped to ``fsname``: none of its middle
    components starts with ``FSNAME-`` (lctl's device names: ``lfs1-OST0000-osc-<instance>``,
    ``lfs1-MDT0000-mdc-<instance>``, llite ``lfs1-<instance>``; recorded in
    ``tests/fixtures/tools/lctl/get_param_aws_tips.txt``), so it also reaches other file systems (``lfs1*``
    matches ``lfs10``). Raises :class:`ParamError` naming the pattern, the value and what is valid."""
    if not isinstance(params, dict) or not params:
        raise ParamError(
            f"params: {params!r} must be a non-empty mapping of lctl parameter pattern to value, for "
            "example {'osc.lfs1-OST*.max_rpcs_in_flight': 32}"
        )
    out: dict[str, str] = {}
    warnings: list[str] = []
    for pattern, value in params.items():
        if (
            not isinstance(pattern, str)
            or not PATTERN_RE.match(pattern)
            or pattern.startswith(".")
            or pattern.endswith(".")
            or ".." in pattern
        ):
            raise ParamError(
                f"params: key {pattern!r} is not an lctl parameter pattern (dot-separated components "
                "of letters, digits, _ - @ and glob characters * ? [ ], for example "
                "osc.lfs1-OST*.max_rpcs_in_flight)"
            )
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, (str, int, float)):
            raise ParamError(f"params[{pattern!r}]: {value!r} must be a string or a number")
        text = str(value).strip()
        if not text or "\n" in text or "=" in text:
            raise ParamError(f"params[{pattern!r}]: {value!r} must be a non-empty one-line value without '='")
        out[pattern] = text
        comps = pattern.split(".")
        if fsname and not any(c.startswith(fsname + "-") for c in comps[1:-1]):
            warnings.append(
                f"params: {pattern} is not scoped to file system {fsname}; it applies to every "
                "Lustre file system mounted on this node"
            )
    return out, warnings


def set_order(params: dict[str, str]) -> list[str]:
    """Patterns in the order to set them: ``*max_rpcs_in_flight`` before ``*max_mod_rpcs_in_flight``, else as given."""
    return sorted(
        params,
        key=lambda p: 0 if p.endswith(".max_rpcs_in_flight") else 2 if p.endswith(".max_mod_rpcs_in_flight") else 1,
    )


def same_value(current: str, wanted: str) -> bool:
    """Values as lctl prints them against the wanted one: equal text, or equal numbers (``32`` == ``32.0``)."""
    a, b = current.strip(), wanted.strip()
    if a == b:
        return True
    try:
        return float(a) == float(b)
    except ValueError:
        return False


# --- systemd -------------------------------------------------------------------------------------------------

_UNIT_VALID = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_.")


def systemd_escape_path(path: str, where: str = "mount_point") -> str:
    """``systemd-escape --path PATH`` (see the module doc): ``/mnt/lfs1`` -> ``mnt-lfs1``, ``/`` -> ``-``. Raises
    :class:`ParamError` naming ``where`` for a relative path or one with ``.``/``..`` components."""
    if not path.startswith("/"):
        raise ParamError(f"{where}: {path!r} must be an absolute path (starting with /, for example /mnt/lfs1)")
    parts = [p for p in path.split("/") if p]
    if any(p in (".", "..") for p in parts):
        raise ParamError(f"{where}: {path!r} is not a normalised path (no . or .. components)")
    if not parts:
        return "-"
    out = []
    for i, byte in enumerate("/".join(parts).encode("utf-8")):
        c = chr(byte)
        if c == "/":
            out.append("-")
        elif (c == "." and i == 0) or c not in _UNIT_VALID:
            out.append(f"\\x{byte:02x}")
        else:
            out.append(c)
    return "".join(out)


def mount_unit_name(mount_point: str) -> str:
    """The systemd mount unit of ``mount_point`` (``/mnt/lfs1`` -> ``mnt-lfs1.mount``; systemd.mount(5): a mount
    unit is named after its escaped path). Raises :class:`ParamError` as :func:`systemd_escape_path` does."""
    return systemd_escape_path(mount_point) + ".mount"


def tune_unit_name(fsname: str) -> str:
    """The oneshot unit this module writes for ``fsname`` before Lustre 2.17: ``hwaac-lustre-tune-FSNAME.service``
    (an fsname is ``[A-Za-z0-9_]``, nothing to escape)."""
    return f"hwaac-lustre-tune-{fsname}.service"


def exec_quote(arg: str) -> str:
    """One ExecStart= argument, written so systemd passes it unchanged."""
    arg = arg.replace("%", "%%").replace("$", "$$")
    if arg and not any(c in arg for c in " \t\"'\\;"):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_unit(fsname: str, mount_point: str, params: dict[str, str], lctl: str) -> str:
    """The oneshot unit that applies ``params`` each time the mount unit of ``mount_point`` is started
    (``After=``/``BindsTo=``/``WantedBy=`` the mount unit, one ``ExecStart=LCTL set_param P=V`` per parameter in
    :func:`set_order`). Raises :class:`ParamError` as :func:`mount_unit_name` does."""
    mount_unit = mount_unit_name(mount_point)
    lines = [
        "# Managed by aiinfra.hwaac.lustre_tune; changes here are replaced.",
        f"# Lustre client tunables of {fsname}, applied after each mount of {mount_point} (Lustre before 2.17 has",
        "# no /etc/lustre/mount.client.params).",
        "[Unit]",
        f"Description=hwaac: Lustre client tunables of {fsname} on {mount_point}",
        f"After={mount_unit}",
        f"BindsTo={mount_unit}",
        "",
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
    ]
    for pattern in set_order(params):
        lines.append(f"ExecStart={exec_quote(lctl)} set_param {exec_quote(f'{pattern}={params[pattern]}')}")
    lines += ["", "[Install]", f"WantedBy={mount_unit}", ""]
    return "\n".join(lines)


# --- mount.client.params -----------------------------------------------------------------------------------


def render_params_block(fsname: str, params: dict[str, str]) -> list[str]:
    """The lines of the hwaac block of ``fsname`` in ``mount.client.params``: the BEGIN marker (with a note that
    the module owns the block), ``PATTERN=VALUE`` per parameter in :func:`set_order`, the END marker."""
    return [
        BLOCK_BEGIN.format(fsname=fsname) + " (managed by aiinfra.hwaac.lustre_tune; edits inside are replaced)",
        *(f"{p}={params[p]}" for p in set_order(params)),
        BLOCK_END.format(fsname=fsname),
    ]


def _is_begin(line: str, begin: str) -> bool:
    s = line.strip()
    return s.startswith(begin) and (len(s) == len(begin) or s[len(begin)] == " ")


def _block_spans(lines: list[str], fsname: str) -> list[tuple[int, int]]:
    """(BEGIN index, END index) of each hwaac block of ``fsname`` in ``lines``. Raises :class:`ParamError` for a
    BEGIN line without its END line (before the end of the file or the next BEGIN of the same file system):
    the module cannot tell where such a block ends, and guessing would drop the lines after it."""
    begin = BLOCK_BEGIN.format(fsname=fsname)
    end = BLOCK_END.format(fsname=fsname)
    spans: list[tuple[int, int]] = []
    start = None
    for i, line in enumerate(lines):
        if _is_begin(line, begin):
            if start is not None:
                raise ParamError(
                    f"line {start + 1}: {lines[start]!r} opens the hwaac block of {fsname} but no "
                    f"{end!r} line follows before the next BEGIN (line {i + 1}); add the END line where "
                    "the block ends (the module does not guess)"
                )
            start = i
        elif start is not None and line.strip() == end:
            spans.append((start, i))
            start = None
    if start is not None:
        raise ParamError(
            f"line {start + 1}: {lines[start]!r} opens the hwaac block of {fsname} but no {end!r} line "
            "closes it; add the END line where the block ends (the module does not guess, and the lines "
            "after it may be settings of your own)"
        )
    return spans


def update_params_file(text: str, fsname: str, params: dict[str, str] | None) -> str:
    """``text`` with the hwaac block of ``fsname`` replaced by ``params`` (``None``: removed) or added at the end
    (after a blank line). Lines outside the block are kept as they are; a second complete block of ``fsname`` is
    removed. Raises :class:`ParamError` naming the line of a BEGIN marker without its END marker."""
    lines = text.splitlines()
    spans = _block_spans(lines, fsname)
    block = render_params_block(fsname, params) if params is not None else []
    out: list[str] = []
    placed = False
    i = 0
    for start, stop in spans:
        out.extend(lines[i:start])
        if not placed:
            out.extend(block)
            placed = True
        i = stop + 1
    out.extend(lines[i:])
    if not placed and block:
        if out and out[-1].strip():
            out.append("")
        out.extend(block)
    return "\n".join(out) + ("\n" if out else "")


def outside_block_settings(text: str, fsname: str) -> dict[str, str]:
    """``PARAM=VALUE`` lines of the file outside the hwaac block(s) of ``fsname`` -> {PARAM: VALUE} (comments and
    blank lines skipped). Raises :class:`ParamError` as :func:`update_params_file` does."""
    lines = text.splitlines()
    inside = set()
    for start, stop in _block_spans(lines, fsname):
        inside.update(range(start, stop + 1))
    out: dict[str, str] = {}
    for i, line in enumerate(lines):
        s = line.strip()
        if i in inside or not s or s.startswith("#") or "=" not in s:
            continue
        k, _sep, v = s.partition("=")
        out[k.strip()] = v.strip()
    return out
