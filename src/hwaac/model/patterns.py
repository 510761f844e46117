"""Name patterns and the names they make: device, interface and port names of the intent.

A pattern is a Python format string (``leaf-p{plane}-su{su:02d}-r{rail}``) restricted to what a name needs: the
fields its role fills in, an optional zero-padded width (``{su:02d}``), nothing else. Conversions (``{rail!r}``),
attribute or index access (``{rail.__class__}``, ``{rail[0]}``) and other format specs are refused: they would
put Python's reprs into device names or raise while planning. Device names must be host names (RFC 1123
labels), interface and port names Linux interface names (net/core/dev.c ``dev_valid_name``). Why and the
figures: docs/intent-limits.md.
"""

from __future__ import annotations

import re
import string
from collections.abc import Collection

# one RFC 1123 label, lower case: a device name is a host name, a NetBox device and a folder of the render
HOSTNAME = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
HOSTNAME_VALID = "a host name: 1-63 lower-case letters, digits and '-', not starting or ending with '-' (RFC 1123)"
# a NetBox slug (Django's validate_slug), e.g. fabric.site
SLUG = r"^[-a-zA-Z0-9_]{1,100}$"
SLUG_VALID = "a NetBox slug: 1-100 letters, digits, '-' or '_'"

IFNAMSIZ = 16  # Linux include/uapi/linux/if.h, with the terminating NUL
IFNAME_VALID = (
    f"a Linux interface name: 1-{IFNAMSIZ - 1} characters without white space, '/' or ':' "
    "(net/core/dev.c dev_valid_name), e.g. rail0 or Ethernet0"
)
_IFNAME_BAD = re.compile(r"[\s/:]")
# IB_DEVICE_NAME_MAX 64 with the NUL (include/uapi/rdma/ib_user_verbs.h)
HCA_NAME = re.compile(r"^[A-Za-z0-9_-]{1,63}$")
HCA_VALID = "an RDMA device name: 1-63 letters, digits, '_' or '-', e.g. mlx5_0"

_SPEC = re.compile(r"^0?[0-9]{0,2}d?$")  # "", "d", "2", "02d", "03": a zero-padded width of an integer

_hostname = re.compile(HOSTNAME)


def pattern_problem(pattern: str, fields: Collection[str], text_fields: Collection[str] = ()) -> str | None:
    """What is wrong with ``pattern`` as a name pattern filled in with ``fields`` (integers, and the strings of
    ``text_fields``, which take no format spec), or None.

    The answer names the bad part of the pattern and the allowed fields."""
    allowed = ", ".join("{" + f + "}" for f in fields)
    try:
        parts = list(string.Formatter().parse(pattern))
    except ValueError as exc:  # "Single '}' encountered", "expected '}' before end of string"
        return f"not a format pattern ({exc}); literal braces are written {{{{ and }}}}"
    for _, field, spec, conversion in parts:
        if field is None:
            continue
        if conversion is not None:
            return f"conversion !{conversion} in {{{field}!{conversion}}} is not allowed; fields: {allowed}"
        if field not in fields:
            what = "attribute or index access" if re.search(r"[.\[]", field) else "unknown field"
            return f"{what} {{{field}}}; fields: {allowed}"
        if spec and (field in text_fields or not _SPEC.match(spec)):
            return f"format spec {{{field}:{spec}}} is not allowed; only a zero-padded width such as {{{field}:02d}}"
    return None


def hostname_problem(name: str) -> str | None:
    """Why ``name`` is not a host name (:data:`HOSTNAME`), or None."""
    if _hostname.match(name):
        return None
    if len(name) > 63:
        return f"{len(name)} characters, more than a host name's 63"
    bad = sorted({c for c in name if not (c.isascii() and ((c.isalnum() and not c.isupper()) or c == "-"))})
    if bad:
        return "characters a host name cannot hold: " + " ".join(repr(c) for c in bad[:5])
    return "starts or ends with '-'" if name else "empty"


def ifname_problem(name: str) -> str | None:
    """Why ``name`` is not a Linux interface name, or None."""
    if not name or name in (".", ".."):
        return "not a name"
    if len(name) >= IFNAMSIZ:
        return f"{len(name)} characters, more than Linux's {IFNAMSIZ - 1} (IFNAMSIZ)"
    if _IFNAME_BAD.search(name) or not name.isprintable():
        return "white space, '/' or ':'"
    return None
