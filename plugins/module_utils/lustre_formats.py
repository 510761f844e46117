# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""The one copy of the Lustre text formats both sides read: LNet network names and NIDs, ``lctl list_nids``,
``/proc/mounts`` lines and Lustre mount sources, and the NI entries of ``lnetctl net show``/``export`` YAML.

Host modules import it as ``ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_formats``; the controller
package imports the same file as ``hwaac.health.parsers.lustre_formats`` (a symbolic link to this file, which the
wheel build copies), so it uses only the standard library, imports nothing of the collection and runs on the
managed hosts' Python (3.9+). ``docs/health-parsers.md`` names the formats and their sources. Functions that read
tool output never raise on it; the checking helpers raise :class:`LustreError` with the value and what is valid.
"""

from __future__ import annotations

import re

# LND names with an optional network number: tcp, tcp1, o2ib, o2ib0, o2ib3, gni, kfi, efa, ptl4lnd ...
NET_RE = re.compile(r"^(?P<lnd>[a-z][a-z0-9]*?)(?P<num>\d*)$")
OCTAL_ESCAPE_RE = re.compile(r"\\([0-7]{3})")
# lctl list_nids with LNet loaded but not up: "IOC_LIBCFS_GET_NI error 100: Network is down" (l_ioctl.c)
LNET_DOWN_MARKERS = ("Network is down", "LNet stack down")


class LustreError(Exception):
    """Bad input or output that cannot be read; the message names the field, the value and what is valid."""


# --- LNet networks and NIDs ---------------------------------------------------------------------------------------


def normalise_net(net: str) -> str:
    """``o2ib0`` -> ``o2ib``, ``tcp0`` -> ``tcp``, ``o2ib00`` -> ``o2ib``, ``o2ib1`` stays: LNet prints network
    number 0 without its number (``libcfs_net2str``, lnet/libcfs ``nidstrings.c``). Raises :class:`LustreError` for
    a name that is not an LND name (lower-case letters, then letters or digits) with an optional number."""
    m = NET_RE.match(net or "")
    if not m:
        raise LustreError(
            f"'{net}' is not an LNet network name (expected an LND name and an optional number, "
            "for example o2ib, o2ib1, tcp)"
        )
    num = m.group("num")
    return m.group("lnd") + (num.lstrip("0") if num and num.strip("0") else "")


def normalise_nid(nid: str) -> str:
    """A NID as LNet prints it, for comparing NIDs written differently: ``10.20.0.1@o2ib0`` -> ``10.20.0.1@o2ib``,
    ``@o2ib1`` unchanged, the address lower-cased (host names are case-insensitive, RFC 4343). A text that is not
    ``ADDRESS@NET`` comes back unchanged. Never raises."""
    address, at, net = nid.rpartition("@")
    if not at or not address or not NET_RE.match(net):
        return nid
    return f"{address.lower()}@{normalise_net(net)}"


def split_nid(text: str) -> tuple[str, str] | None:
    """``ADDRESS@NET`` -> (address as written, network normalised); None when it is not of that form."""
    address, at, net = text.strip().rpartition("@")
    if not at or not address or "@" in address or any(c in address for c in ",:/ \t") or not NET_RE.match(net):
        return None
    return address, normalise_net(net)


class ListNids:
    """``lctl list_nids`` read: ``nids`` (address, normalised network) in output order, ``bad_lines`` that are not
    NIDs, ``lnet_down`` when it reported LNet down instead, ``empty`` when it printed nothing."""

    def __init__(self) -> None:
        self.nids: list[tuple[str, str]] = []
        self.bad_lines: list[str] = []
        self.lnet_down = False
        self.empty = False

    @property
    def nets(self) -> list[str]:
        """The local LNet networks, each once, in order (``lo`` left out)."""
        return list(dict.fromkeys(net for _address, net in self.nids if net != "lo"))


def read_list_nids(text: str) -> ListNids:
    """Read ``lctl list_nids`` (``jt_ptl_list_nids`` in lustre-release ``lnet/utils/portals.c``: one
    ``libcfs_nid2str()`` a line; ``0@lo`` is not listed). Never raises."""
    result = ListNids()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    result.empty = not lines
    for line in lines:
        if any(marker in line for marker in LNET_DOWN_MARKERS):
            result.lnet_down = True
            continue
        nid = split_nid(line)
        if nid is None:
            result.bad_lines.append(line)
        else:
            result.nids.append(nid)
    return result


# --- /proc/mounts and Lustre mount sources ------------------------------------------------------------------------


def unescape_mount_field(text: str) -> str:
    """A ``/proc/mounts`` or fstab field with the kernel's octal escapes decoded (``\\040`` space, ``\\011`` tab,
    ``\\012`` newline, ``\\134`` backslash: Linux ``fs/proc_namespace.c`` ``show_vfsmnt()``, ``mangle()``). A
    backslash not followed by three octal digits stays. Never raises."""
    return OCTAL_ESCAPE_RE.sub(lambda m: chr(int(m.group(1), 8)), text)


def mount_lines(text: str) -> list[tuple[str, str, str, list[str]]]:
    """(source, mount point, type, options) of each line of ``/proc/mounts`` or fstab (``SOURCE MP TYPE [OPTS
    [FREQ PASS]]``), fields decoded (:func:`unescape_mount_field`); blank, comment and short lines skipped (the
    kernel escapes whitespace, so splitting before decoding is exact). Never raises."""
    out = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        parts = s.split()
        if len(parts) < 3:
            continue
        options = [unescape_mount_field(o) for o in parts[3].split(",")] if len(parts) > 3 else []
        out.append(
            (unescape_mount_field(parts[0]), unescape_mount_field(parts[1]), unescape_mount_field(parts[2]), options)
        )
    return out


def proc_mounts_cut(text: str) -> str | None:
    """Why a ``/proc/mounts`` text looks cut short, or None: the kernel prints every line with six fields (source,
    mount point, type, options, then `` 0 0``: Linux ``fs/proc_namespace.c`` ``show_vfsmnt()``), so a last line
    with fewer fields was cut. A text cut right after a whole line reads as fewer mounts: nothing marks the end.
    Not for fstab, whose last two fields are optional. Never raises."""
    last = next((line for line in reversed(text.splitlines()) if line.strip()), None)
    if last is not None and len(last.split()) < 6:
        return f"its last line has {len(last.split())} of the 6 fields the kernel prints: {last.strip()[:120]!r}"
    return None


def split_source(source: str) -> tuple[list[list[str]], str, str] | None:
    """``NID[,NID][:NID[,NID]]:/FSNAME[/SUBDIR]`` (mount.lustre(8): ``,`` NIDs of one MGS node, ``:`` failover
    nodes) -> (MGS nodes, each its NIDs as written; fsname; subdir or ""); None without ``:/``. NIDs never hold
    ``:/``; a subdirectory may. Never raises."""
    if ":/" not in source:
        return None
    nids, _sep, path = source.partition(":/")
    fsname, _sep, subdir = path.partition("/")
    groups = [[n for n in node.split(",") if n] for node in nids.split(":") if node]
    return groups, fsname, subdir


# --- lnetctl net show / export ------------------------------------------------------------------------------------


def _first_interface(ni: dict) -> str | None:
    intf = ni.get("interfaces")
    first = None
    if isinstance(intf, dict) and intf:
        first = next((intf[key] for key in (0, "0") if key in intf), next(iter(intf.values())))
    elif isinstance(intf, list) and intf:
        first = intf[0]
    return None if first is None else str(first)


def lnet_nets(doc: object) -> list[dict]:
    """The networks and their local NIs in a loaded ``lnetctl net show [-v]`` / ``export`` document (either layout:
    cYAML <= 2.15, libyaml 2.16+, which load to the same data): ``[{"net": "net type" as printed, "nis": [{"nid",
    "status", "interface", "tunables", "lnd tunables", "health stats", "keys"}]}]`` in output order (values as
    loaded, None when absent; ``keys``: the NI's keys as printed; ``lo`` included; a network listed twice appears
    twice). :func:`lnet_cut` says whether the document was cut short.

    Raises :class:`LustreError` when the document is not lnetctl's shape (a ``net`` that is not a list of mappings
    with ``net type``, an NI that is not a mapping) or is cut right after ``net:``. Loading the YAML is the
    caller's (each side has its loader).
    """
    if doc is None:
        return []
    if not isinstance(doc, dict):
        raise LustreError(f"unexpected lnetctl output (not a mapping): {str(doc)[:200]!r}")
    if "net" in doc and doc["net"] is None:  # lnetctl prints "net:" with its first network, or nothing
        raise LustreError("'net:' lists no network (output cut short?)")
    nets = doc.get("net") or []
    if not isinstance(nets, list):
        raise LustreError(f"unexpected lnetctl output: 'net' is not a list: {str(nets)[:200]!r}")
    out = []
    for entry in nets:
        if not isinstance(entry, dict) or "net type" not in entry:
            raise LustreError(f"unexpected entry under net: {entry!r}")
        nis = []
        for ni in entry.get("local NI(s)") or []:
            if not isinstance(ni, dict):
                raise LustreError(f"unexpected NI entry under net {entry['net type']}: {ni!r}")
            nis.append(
                {
                    "nid": ni.get("nid"),
                    "status": ni.get("status"),
                    "interface": _first_interface(ni),
                    "tunables": ni.get("tunables"),
                    "lnd tunables": ni.get("lnd tunables"),
                    "health stats": ni.get("health stats"),
                    "keys": tuple(str(k) for k in ni),
                }
            )
        out.append({"net": str(entry["net type"]).strip(), "nis": nis})
    return out


# key of an NI -> keys liblnetconfig always prints after it (lustre_lnet_show_net() in lnet/utils/lnetconfig/
# liblnetconfig.c: status after nid; tunables, dev cpt and CPT after statistics (-v); CPT after tunables (export
# --backup too), printed whenever the NI has a CPT, which every NI has)
NI_KEYS_AFTER = {"nid": ("status",), "statistics": ("tunables", "dev cpt", "CPT"), "tunables": ("CPT",)}


def _lnd(net: str) -> str:
    m = NET_RE.match(net)
    return m.group("lnd") if m else net


def lnet_cut(nets: list[dict]) -> str | None:
    """Why the :func:`lnet_nets` reading of a document looks cut short, or None. Only the last NI can be cut (every
    other one is followed by more output), and lnetctl prints no count or end marker, so the last NI is held to the
    printing code (liblnetconfig ``lustre_lnet_show_net()``; the 2.16+ Netlink path prints the same keys): a network
    has at least one NI (``local NI(s)`` is printed with its first NI); an NI has its interface when ``interfaces:``
    is printed, the keys :data:`NI_KEYS_AFTER` puts after the ones it has, every key that ``lo`` has (each NI
    prints at least what ``lo`` prints) and every key that all the other NIs of its LND have (LNDs differ: ``lo``
    has no interface, and a 2.12 socklnd NI prints no ``lnd tunables``). A document cut right after a complete
    NI reads as a complete document of fewer NIs: nothing in the output can tell. Never raises."""
    for net in nets:
        if not net["nis"]:
            return f"net {net['net']} lists no local NI (output cut short?)"
    if not nets:
        return None
    last = nets[-1]["nis"][-1]
    name = last["nid"] or f"the last {nets[-1]['net']} NI"
    keys = set(last["keys"])
    if "interfaces" in keys and last["interface"] is None:
        return f"{name}: 'interfaces' without an interface (output cut short?)"
    want = list(dict.fromkeys(k for key in keys for k in NI_KEYS_AFTER.get(key, ()) if k not in keys))
    lnd = _lnd(nets[-1]["net"])
    for kin in ("lo", lnd):  # what every lo NI has, and what every other NI of the last NI's LND has
        others = [ni for net in nets if _lnd(net["net"]) == kin for ni in net["nis"] if ni is not last]
        if others and (kin == "lo" or lnd != "lo"):
            common = set.intersection(*(set(ni["keys"]) for ni in others))
            want += [k for k in others[0]["keys"] if k in common and k not in keys and k not in want]
    if want:
        return f"{name}: no {', '.join(want)} (output cut short?)"
    return None


def lnet_down_text(text: str) -> bool:
    """Whether lnetctl/lctl text says LNet is loaded but down: ``Network is down`` (ENETDOWN, <= 2.15 ioctl path),
    ``errno: -100`` in its YAML error, or the 2.16+ Netlink ``LNet stack down``."""
    return any(marker in text for marker in LNET_DOWN_MARKERS) or re.search(r"errno:\s*-100\b", text) is not None
