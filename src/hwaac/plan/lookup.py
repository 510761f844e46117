"""Look-ups in a written plan (``plan.json`` of :mod:`hwaac.plan.serialize` and the files ``hwaac plan -o DIR``
writes beside it): a port's cabled peer, a node's rail ports with their addresses and leaf ports, a GPU node's
NCCL HCA list. What a playbook needs about one device, without loading the intent. Errors name the device, the
port or file, and what is valid.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hwaac.plan.serialize import plan_doc_problem, read_plan

NCCL_ENV = "nccl.env"
"""A GPU node's NCCL environment file, ``<render_dir>/hosts/<node>/nccl.env`` (:mod:`hwaac.render.host.nccl`)."""

_SHOWN = 8  # names listed in an error message before "... N in all"


class PlanLookupError(ValueError):
    """A look-up that cannot be answered: an unknown device, an uncabled port, a missing rendered file."""


@dataclass(frozen=True)
class PlanIndex:
    """A plan document with its cable ends indexed: ``ends[(device, port)] = (cable id, this end, other end)``,
    where an end is ``[device, port, address]`` as in ``plan.json``; ``host_links[node]``: its host cables."""

    doc: dict[str, Any]
    folder: Path | None
    ends: dict[tuple[str, str], tuple[str, list[str], list[str]]]
    host_links: dict[str, list[str]]

    @classmethod
    def of(cls, doc: dict[str, Any], folder: Path | None = None) -> PlanIndex:
        ends: dict[tuple[str, str], tuple[str, list[str], list[str]]] = {}
        host_links: dict[str, list[str]] = {}
        for cable, link in doc.get("links", {}).items():
            a, b = link["a"], link["b"]
            ends[(a[0], a[1])] = (cable, a, b)
            ends[(b[0], b[1])] = (cable, b, a)
            if link.get("kind") == "host":
                host_links.setdefault(a[0], []).append(cable)
        return cls(doc, folder, ends, host_links)


_CACHE: dict[tuple[str, int, int], PlanIndex] = {}


def load(plan: str | os.PathLike[str] | Mapping[str, Any]) -> PlanIndex:
    """The indexed plan of ``plan``: a ``plan.json`` path, the folder that holds it, or the loaded document.

    A file is read once per change (cached by path, size and modification time), so a play that looks up every
    host reads it once.

    Raises:
        PlanLookupError: the file is missing or not an hwaac plan, or the document is not one.
    """
    if isinstance(plan, Mapping):
        doc = dict(plan)
        problem = plan_doc_problem(doc)
        if problem is not None:
            raise PlanLookupError(
                f"not an hwaac plan: {problem} (give plan.json's path, its folder, or its loaded content)"
            )
        return PlanIndex.of(doc)
    if not isinstance(plan, str | os.PathLike):
        raise PlanLookupError(
            f"plan: expected a plan.json path, its folder or the loaded plan, got {type(plan).__name__}"
        )
    path = Path(plan)
    file = path / "plan.json" if path.is_dir() else path
    try:
        st = file.stat()
    except OSError as exc:
        raise PlanLookupError(
            f"{file}: {exc.strerror or exc} (write the plan with `hwaac plan FABRIC -o DIR`)"
        ) from None
    key = (str(file.resolve()), st.st_size, st.st_mtime_ns)
    hit = _CACHE.get(key)
    if hit is None:
        try:
            doc = read_plan(file)
        except (OSError, ValueError) as exc:
            raise PlanLookupError(str(exc)) from None
        if len(_CACHE) >= 4:
            _CACHE.pop(next(iter(_CACHE)))
        hit = _CACHE[key] = PlanIndex.of(doc, file.parent)
    return hit


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    return shown + (f", ... ({len(names)} in all)" if len(names) > _SHOWN else "")


def _check_device(index: PlanIndex, device: str) -> None:
    doc = index.doc
    if device not in doc.get("switches", {}) and device not in doc.get("nodes", {}):
        examples = [*list(doc.get("switches", {}))[:2], *list(doc.get("nodes", {}))[:2]]
        raise PlanLookupError(
            f"device {device!r} is not in the plan of fabric {doc.get('fabric', '?')!r} "
            f"({len(doc.get('switches', {}))} switches, {len(doc.get('nodes', {}))} nodes; "
            f"names like {', '.join(examples)})"
        )


def _rail_of(index: PlanIndex, leaf: str) -> int | None:
    rail = index.doc.get("switches", {}).get(leaf, {}).get("rail")
    return int(rail) if rail is not None else None


def port_peer(plan: str | os.PathLike[str] | Mapping[str, Any], device: str, port: str) -> dict[str, Any]:
    """The far end of the cable planned at ``device`` ``port`` (a switch port ``Ethernet0``, a node's rail
    interface ``rail0``).

    Returns:
        ``{"device", "port", "address"}`` of the peer, ``local_address`` (this end's), ``cable_id``, ``kind``
        (host | leaf_spine | spine_super_spine), ``plane``, ``prefixlen``, and ``rail`` for a host link.

    Raises:
        PlanLookupError: the device is not in the plan, or the port has no planned cable (names the cabled ports).
    """
    index = load(plan)
    _check_device(index, device)
    hit = index.ends.get((device, port))
    if hit is None:
        cabled = sorted((p for d, p in index.ends if d == device), key=_port_order)
        raise PlanLookupError(
            f"{device} port {port!r} has no planned cable (cabled ports: {_listed(cabled) or 'none'})"
        )
    cable, here, there = hit
    link = index.doc["links"][cable]
    out: dict[str, Any] = {
        "device": there[0],
        "port": there[1],
        "address": there[2],
        "local_address": here[2],
        "cable_id": cable,
        "kind": link.get("kind"),
        "plane": link.get("plane"),
        "prefixlen": link.get("prefixlen"),
    }
    if link.get("kind") == "host":
        out["rail"] = _rail_of(index, link["b"][0])
    return out


def _port_order(port: str) -> tuple[str, int]:
    head = port.rstrip("0123456789")
    tail = port[len(head) :]
    return head, int(tail) if tail else -1


def node_rails(
    plan: str | os.PathLike[str] | Mapping[str, Any], node: str, rail: int | None = None
) -> list[dict[str, Any]]:
    """A node's NIC ports on the fabric (its host links), in NIC order (rail, then plane); only ``rail``'s when
    given. Each: ``rail``, ``plane``, ``interface``, ``address``, ``prefixlen``, ``network`` (CIDR), ``leaf``,
    ``leaf_port``, ``leaf_address`` (the node's next hop on that rail), ``cable_id``.

    Raises:
        PlanLookupError: ``node`` is not a node of the plan, or ``rail`` is not one of its rails.
    """
    index = load(plan)
    nodes = index.doc.get("nodes", {})
    if node not in nodes:
        _check_device(index, node)
        raise PlanLookupError(f"{node!r} is a switch, not a node: its ports' peers are a port look-up")
    rails: list[dict[str, Any]] = []
    for cable in index.host_links.get(node, []):
        link = index.doc["links"][cable]
        leaf = link["b"][0]
        prefixlen = int(link["prefixlen"])
        rails.append(
            {
                "rail": _rail_of(index, leaf),
                "plane": link.get("plane", 0),
                "interface": link["a"][1],
                "address": link["a"][2],
                "prefixlen": prefixlen,
                "network": str(ipaddress.ip_interface(f"{link['a'][2]}/{prefixlen}").network),
                "leaf": leaf,
                "leaf_port": link["b"][1],
                "leaf_address": link["b"][2],
                "cable_id": cable,
            }
        )
    rails.sort(key=lambda r: (r["rail"] if r["rail"] is not None else -1, r["plane"], r["interface"]))
    if rail is None:
        return rails
    if isinstance(rail, bool) or not isinstance(rail, int):
        raise PlanLookupError(f"rail: expected a rail number, got {rail!r}")
    picked = [r for r in rails if r["rail"] == rail]
    if not picked:
        have = sorted({r["rail"] for r in rails if r["rail"] is not None})
        raise PlanLookupError(f"{node} has no port on rail {rail} (its rails: {have or 'none'})")
    return picked


def read_env_file(text: str, where: str) -> dict[str, str]:
    """``KEY=value`` lines (``#`` comments, blank lines) as written by :mod:`hwaac.render.host.nccl`; values
    unquoted, as NCCL's own file parser and systemd ``EnvironmentFile=`` read them.

    Raises:
        PlanLookupError: a line that is neither a comment nor ``KEY=value`` (names ``where`` and the line number).
    """
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, sep, value = stripped.partition("=")
        if not sep or not key.strip().isidentifier():
            raise PlanLookupError(f"{where}:{number}: not a KEY=value line: {line[:80]!r}")
        out[key.strip()] = value
    return out


def parse_ib_hca(value: str) -> dict[str, Any]:
    """An ``NCCL_IB_HCA`` value as NCCL reads it (NCCL environment variables documentation, NCCL_IB_HCA; NVIDIA/nccl
    ``src/transport/net_ib/init.cc`` and ``parseStringList`` in ``src/misc/utils.cc``): an optional ``^`` (exclude
    the list), then an optional ``=`` (exact names, not prefixes), then entries ``device[:port[:rail[:plane]]]``
    separated by commas. An empty port field (``mlx5_0::0:0``) names every port of the device, as NCCL 2.30 reads
    it (older releases read it as port 0, which selects nothing); rail and plane (NCCL 2.30) label a device and
    select nothing, so they are checked but not kept. As in NCCL, nothing is trimmed: in ``=mlx5_0, mlx5_1`` the
    second name starts with a space, and no device is named so.

    Returns:
        ``{"value", "exclude", "exact", "devices": [name], "entries": [{"device", "port"}]}`` (port None when
        the entry names none).

    Raises:
        PlanLookupError: an entry with an empty name, a port, rail or plane that is not a number, or more than
            four fields.
    """
    rest = value
    exclude = rest.startswith("^")
    rest = rest[1:] if exclude else rest
    exact = rest.startswith("=")
    rest = rest[1:] if exact else rest
    entries: list[dict[str, Any]] = []
    for item in rest.split(","):
        if not item:
            continue
        name, *numbers = item.split(":")
        if not name or len(numbers) > 3 or not all(n == "" or n.isdigit() for n in numbers):
            raise PlanLookupError(f"NCCL_IB_HCA={value!r}: entry {item!r} is not DEVICE[:PORT[:RAIL[:PLANE]]]")
        port = numbers[0] if numbers else ""
        entries.append({"device": name, "port": int(port) if port else None})
    return {
        "value": value,
        "exclude": exclude,
        "exact": exact,
        "devices": [e["device"] for e in entries],
        "entries": entries,
    }


def nccl_hca(plan: str | os.PathLike[str] | Mapping[str, Any], node: str) -> dict[str, Any]:
    """``NCCL_IB_HCA`` of GPU node ``node`` as rendered in ``<plan folder>/hosts/<node>/nccl.env``, read by
    :func:`parse_ib_hca`.

    Raises:
        PlanLookupError: ``plan`` is not a path (the loaded document does not say where the rendered files
            are), the node is not a GPU node of the plan, its file is missing or unreadable, or it sets no
            NCCL_IB_HCA.
    """
    if isinstance(plan, Mapping):
        raise PlanLookupError(
            "the NCCL HCA list is in the rendered hosts/<node>/nccl.env: give the folder "
            "`hwaac plan -o DIR` wrote (or its plan.json path), not the loaded plan"
        )
    index = load(plan)
    entry = index.doc.get("nodes", {}).get(node)
    if entry is None:
        _check_device(index, node)
        raise PlanLookupError(f"{node!r} is a switch, not a GPU node: only GPU nodes have {NCCL_ENV}")
    if entry.get("kind") != "gpu":
        raise PlanLookupError(f"{node!r} is a {entry.get('kind')!r} node: only GPU nodes have {NCCL_ENV}")
    path = (index.folder or Path(".")) / "hosts" / node / NCCL_ENV  # a path was given: folder is set
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PlanLookupError(
            f"{path}: no such file (`hwaac plan FABRIC -o DIR` renders hosts/<node>/{NCCL_ENV} "
            "for each GPU node beside plan.json)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanLookupError(f"{path}: {exc}") from None
    env = read_env_file(text, str(path))
    if "NCCL_IB_HCA" not in env:
        raise PlanLookupError(f"{path}: sets no NCCL_IB_HCA (it sets {', '.join(env) or 'nothing'})")
    return parse_ib_hca(env["NCCL_IB_HCA"])
