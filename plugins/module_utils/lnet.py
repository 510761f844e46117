# Copyright: hwaac maintainers
# Apache-2.0
"""Parse ``lnetctl`` output for the ``aiinfra.hwaac.lnet`` module (the changes are planned in ``lnet_plan``).

Host side: Python standard library plus ``ansible.module_utils`` (PyYAML through
``ansible.module_utils.common.yaml``; callers check :data:`HAS_YAML`). Every output is read with a YAML loader,
never with regular expressions, because lnetctl prints the same keys in two layouts (<= 2.15 ``cYAML_print_tree``,
2.16+ Netlink paths through libyaml with indent 6); :func:`parse_state` turns either into one model with
normalised names (``o2ib0`` == ``o2ib``, ``max_intf`` == ``max_interfaces``). The layouts, the model and their
sources: docs/modules/lustre.md, "lnetctl output"; samples: ``tests/fixtures/tools/lnetctl/README.md``.
"""

from __future__ import annotations

import re

from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_formats import lnet_cut, lnet_down_text, lnet_nets
from ansible_collections.aiinfra.hwaac.plugins.module_utils.lustre_mount import (
    LustreError,
    normalise_net,
    parse_mounts,
    parse_source,
)

try:
    from ansible.module_utils.common.yaml import (  # pylint: disable=unused-import  # HAS_YAML: for callers
        HAS_YAML,
        yaml_load,
    )
except ImportError:  # pragma: no cover - ansible-core always ships it
    HAS_YAML = False
    yaml_load = None

# errno values lnetctl prints negated (Linux asm-generic/errno-base.h, errno.h)
ENOENT = 2
ENODEV = 19
EEXIST = 17
EBUSY = 16
EINVAL = 22
ENETDOWN = 100

# ``tunables:`` block (liblnetconfig_lnd.c lustre_net_show_tunables)
TUNABLES = ("peer_timeout", "peer_credits", "peer_buffer_credits", "credits")
GLOBAL_ALIASES = {"max_intf": "max_interfaces"}  # 2.12's name of a global setting -> today's
# top-level keys of lnetctl's YAML errors (cYAML_build_error commands; yaml_lnet_print_error flags)
ERROR_KEYS = ("add", "del", "show", "manage", "configure", "unconfigure", "import", "parser", "yaml", "ni", "set")

_DOC_MARKER_RE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_ERROR_START_RE = re.compile(r"^(?:---\s*$|(?:" + "|".join(ERROR_KEYS) + r"):\s*$)", re.MULTILINE)


class LnetError(Exception):
    """lnetctl output that cannot be read, or a state the module cannot reach."""


class LnetInputError(LnetError):
    """A bad module option: ``option`` (path such as ``networks[1].interfaces``), the ``value`` given and what
    is ``valid``."""

    def __init__(self, option: str, value: object, valid: str) -> None:
        super().__init__(f"{option}: {value!r} is not valid; {valid}")
        self.option = option
        self.value = value
        self.valid = valid


class LnetctlError:
    """One entry of lnetctl's YAML error report: ``op`` (``add``, ``del``, ``show``...), ``entity`` (``net``,
    ``lnet``...), ``errno`` (negative, or None when not printed) and ``descr`` (quotes removed)."""

    def __init__(self, op: str, entity: str, errno: int | None, descr: str) -> None:
        self.op = op
        self.entity = entity
        self.errno = errno
        self.descr = descr

    def __repr__(self) -> str:
        return f"LnetctlError({self.op!r}, {self.entity!r}, {self.errno!r}, {self.descr!r})"

    def __str__(self) -> str:
        num = "" if self.errno is None else f" errno {self.errno}"
        return f"{self.op} {self.entity}:{num} {self.descr}".strip()


# --- names ---------------------------------------------------------------------------------------------------------
# One copy of LNet network names: module_utils/lustre_formats.py ``normalise_net`` (``o2ib0`` -> ``o2ib``, as
# ``libcfs_net2str`` prints network number 0).


def nid_net(nid: str) -> str | None:
    """The normalised network of a NID (``10.20.0.5@o2ib0`` -> ``o2ib``), or None when it has no ``@net`` or the
    network is not a network name."""
    if "@" not in nid:
        return None
    try:
        return normalise_net(nid.rsplit("@", 1)[1])
    except LustreError:
        return None


# --- YAML --------------------------------------------------------------------------------------------------------


def load_yaml(text: str) -> object:
    """Load lnetctl output with PyYAML's safe loader. Leading lines that are not YAML (``opening /dev/lnet
    failed: ...``) are skipped up to the first error block when the whole text does not load. Raises
    :class:`LnetError` when nothing loads."""
    if yaml_load is None:
        raise LnetError("PyYAML is required to read lnetctl output")
    try:
        return yaml_load(text)
    except Exception as exc:  # yaml.YAMLError; the C loader raises subclasses of it
        m = _ERROR_START_RE.search(text)
        if m and m.start() > 0:
            try:
                return yaml_load(text[m.start() :])
            except Exception:
                pass
        raise LnetError(f"lnetctl printed output that is not YAML: {exc}") from exc


def _load_documents(text: str) -> list:
    """Every YAML document in ``text`` (2.16 errors are ``---``..``...`` documents, possibly after output); parts
    that do not load are skipped (error reports are looked for, not required)."""
    docs: list = []
    if not text.strip():
        return docs
    try:
        doc = load_yaml(text)
        return [doc]
    except LnetError:
        pass
    # several documents: split at the 2.16 markers
    for part in _DOC_MARKER_RE.split(text):
        if part.strip():
            try:
                docs.append(load_yaml(part))
            except LnetError:
                continue
    return docs


def _load_state_documents(text: str) -> dict:
    """lnetctl's show/export output as one mapping: the whole text when it is one YAML document, else every
    document between ``---``/``...`` lines, merged in order (lists under the same key joined, mappings updated).
    2.16+ ``export`` prints its Netlink part with libyaml, which can mark a document with ``---``/``...``, and
    then the global settings with cYAML (lnetctl.c ``jt_export``); PyYAML reads neither as one document, and a
    document after ``...`` needs a ``---`` it may not have. Raises :class:`LnetError` when any part is not YAML
    or not a mapping (nothing is dropped silently)."""
    if yaml_load is None:
        raise LnetError("PyYAML is required to read lnetctl output")
    try:
        docs = [yaml_load(text)]
    except Exception:  # yaml.YAMLError: several documents, or not YAML
        docs = []
        for part in _DOC_MARKER_RE.split(text):
            if not part.strip():
                continue
            try:
                docs.append(yaml_load(part))
            except Exception as exc:
                raise LnetError(f"lnetctl printed output that is not YAML: {exc}") from exc
    merged: dict = {}
    for doc in docs:
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise LnetError(f"unexpected lnetctl output (not a mapping): {text[:200]!r}")
        for key, value in doc.items():
            have = merged.get(key)
            if isinstance(have, list) and isinstance(value, list):
                merged[key] = have + value
            elif isinstance(have, dict) and isinstance(value, dict):
                merged[key] = {**have, **value}
            else:
                merged[key] = value
    return merged


def _unquote(value: object) -> str:
    text = "" if value is None else str(value)
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    return text.strip()


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def parse_errors(text: str) -> list[LnetctlError]:
    """lnetctl's error reports in ``text`` (stderr, or stdout where ``export`` writes them).

    Both layouts: cYAML ``{op: [{entity: {errno: N, descr: "..."}}]}`` (liblnetconfig ``cYAML_build_error``)
    and 2.16+ ``{op: [{entity: '', errno: N, descr: ...}]}`` (lnetctl.c ``yaml_lnet_print_error``). Text that
    is not YAML gives no entries.
    """
    found: list[LnetctlError] = []
    for doc in _load_documents(text):
        if not isinstance(doc, dict):
            continue
        for op, items in doc.items():
            if not isinstance(items, list):
                continue
            for item in items:
                if not isinstance(item, dict):
                    continue
                if "errno" in item or "descr" in item:
                    entity = next(
                        (str(k) for k, v in item.items() if k not in ("errno", "descr", "seq_no") and v in (None, "")),
                        "",
                    )
                    found.append(LnetctlError(str(op), entity, _as_int(item.get("errno")), _unquote(item.get("descr"))))
                    continue
                for entity, body in item.items():
                    if isinstance(body, dict) and ("errno" in body or "descr" in body):
                        found.append(
                            LnetctlError(str(op), str(entity), _as_int(body.get("errno")), _unquote(body.get("descr")))
                        )
    return found


def lnet_down(text: str) -> bool:
    """Whether lnetctl says LNet is loaded but not up: ENETDOWN from the ioctl path (2.15:
    ``cannot get networks: Network is down``, errno -100; ``lctl list_nids``: ``IOC_LIBCFS_GET_NI error 100``) or
    the 2.16+ Netlink message ``LNet stack down``."""
    for err in parse_errors(text):
        if err.errno == -ENETDOWN or "Network is down" in err.descr or "LNet stack down" in err.descr:
            return True
    return lnet_down_text(text)


def modules_missing(text: str) -> bool:
    """Whether lnetctl could not open ``/dev/lnet`` because the LNet modules are not loaded (libcfs
    ``open_ioc_dev``: ``opening /dev/lnet failed: No such device`` / ``hint: the kernel modules may not be
    loaded``)."""
    return "opening /dev/lnet failed" in text or "kernel modules may not be loaded" in text


# --- state -------------------------------------------------------------------------------------------------------


def _int_map(raw: object) -> dict[str, int | str]:
    out: dict[str, int | str] = {}
    if isinstance(raw, dict):
        for k, v in raw.items():
            num = _as_int(v)
            out[str(k)] = num if num is not None else _unquote(v)
    return out


def parse_state(text: str) -> dict:
    """The networks and global settings in ``lnetctl export [--backup]`` or ``lnetctl net show [-v]`` output,
    either layout, as the model in the module docstring. ``lo`` is left out (it cannot be configured). Output
    in several YAML documents is merged (:func:`_load_state_documents`); a network listed twice has its NIs
    joined.

    LND keys printed inside ``tunables:`` (older releases printed o2ib's ``conns_per_peer``,
    ``concurrent_sends``... there and an empty ``lnd tunables:``; recorded in
    ``older/net_show_v2_o2ib_mr_lnd_in_tunables.txt``) are moved to ``lnd_tunables``. Raises :class:`LnetError`
    for text that is not YAML or not lnetctl's shape.
    """
    doc = _load_state_documents(text) if text.strip() else {}
    try:
        entries = lnet_nets(doc)  # module_utils/lustre_formats.py: the one reader of lnetctl's net entries
    except LustreError as exc:
        raise LnetError(str(exc)) from None
    nets: list[dict] = []
    by_name: dict[str, dict] = {}
    for entry in entries:
        try:
            name = normalise_net(entry["net"])
        except LustreError as exc:
            raise LnetError(f"lnetctl printed net type {entry['net']!r}: {exc}") from None
        if name == "lo":
            continue
        net = by_name.get(name)
        if net is None:
            net = {"net": name, "nis": []}
            by_name[name] = net
            nets.append(net)
        for ni in entry["nis"]:
            tun = _int_map(ni["tunables"])
            lnd = _int_map(ni["lnd tunables"])
            for key in [k for k in tun if k not in TUNABLES]:
                lnd.setdefault(key, tun.pop(key))
            net["nis"].append(
                {
                    "interface": ni["interface"],
                    "nid": str(ni["nid"]) if ni["nid"] is not None else None,
                    "status": str(ni["status"]) if ni["status"] is not None else None,
                    "tunables": tun,
                    "lnd_tunables": lnd,
                }
            )
    glob: dict[str, int | str] = {}
    for key, value in _int_map(doc.get("global")).items():
        glob[GLOBAL_ALIASES.get(key, key)] = value
    return {"nets": nets, "global": glob}


def cut_reason(text: str, *, export: bool = False) -> str | None:
    """Why lnetctl's ``net show`` (or, with ``export``, ``export``) output looks cut short, or None (also for text
    :func:`parse_state` rejects): ``lnet_cut`` of module_utils/lustre_formats.py, and for ``export`` no
    ``global:`` (lnetctl.c ``jt_export()`` prints the global settings after the networks and peers, always). Only
    for lnetctl's output: a file written by hand or by
    :func:`~ansible_collections.aiinfra.hwaac.plugins.module_utils.lnet_commands.render_lnet_conf` need not print every
    key lnetctl prints."""
    if not text.strip():
        return None
    try:
        doc = _load_state_documents(text)
        cut = lnet_cut(lnet_nets(doc))
    except (LnetError, LustreError):
        return None
    if cut is None and export and "global" not in doc:
        cut = "no 'global:' after the networks (output cut short?)"
    return cut


def merge_nids(state: dict, shown: dict) -> dict:
    """``state`` (from ``export --backup``, which leaves NIDs out) with the ``nid``/``status`` of the same
    (net, interface) from ``shown`` (``net show``)."""
    index = {(n["net"], ni["interface"]): ni for n in shown.get("nets", []) for ni in n["nis"]}
    for net in state["nets"]:
        for ni in net["nis"]:
            seen = index.get((net["net"], ni["interface"]))
            if seen is not None:
                ni["nid"] = ni.get("nid") or seen.get("nid")
                ni["status"] = ni.get("status") or seen.get("status")
    return state


# --- mounts ------------------------------------------------------------------------------------------------------


def parse_proc_mounts(text: str) -> list[dict]:
    """Lustre mounts in ``/proc/mounts`` text: ``[{"source", "mount_point", "fsname", "nids": [...]}]``, read
    with module_utils/lustre_mount.py (``parse_mounts``: octal escapes decoded; ``parse_source``: the source is
    ``NID[,NID][:NID[,NID]]:/fsname[/subdir]``, mount.lustre.8, /proc/mounts shows resolved NIDs). A source that
    cannot be read gives ``fsname`` "" and no ``nids``, which :func:`used_nets` counts as using every local
    network."""
    mounts: list[dict] = []
    for entry in parse_mounts(text):
        if entry.fstype != "lustre":
            continue
        try:
            groups, fsname, _subdir = parse_source(entry.source)
            nids = [str(nid) for group in groups for nid in group]
        except LustreError:
            fsname, nids = "", []
        mounts.append({"source": entry.source, "mount_point": entry.mount_point, "fsname": fsname, "nids": nids})
    return mounts


def used_nets(mounts: list[dict], current: dict) -> dict[str, list[str]]:
    """Local networks that mounted file systems use -> the mount points using them.

    A mount uses the networks of its MGS NIDs. When a NID has no network or its network is not local (reached
    through an LNet router, or unreadable), every local network counts as used: the module cannot tell which
    one carries that traffic, so it refuses conservatively.
    """
    local = [n["net"] for n in current["nets"]]
    used: dict[str, list[str]] = {}
    for mount in mounts:
        nets = {nid_net(nid) for nid in mount["nids"]}
        if not nets or None in nets or not nets <= set(local):
            nets = set(local)
        for net in sorted(nets):
            used.setdefault(net, []).append(mount["mount_point"])
    return used
