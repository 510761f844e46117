"""What a lab builds, read from a rendered folder (``hwaac plan FABRIC -o DIR``): devices, cables, and each
switch's ports from its config_db.json.

Every switch is in the lab; of the GPU nodes, ``nodes_per_su`` per SU (lowest slots first; default: all when
the fabric has at most 64 nodes, else 2). A cable is in the lab when both its ends are.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from hwaac.lab.errors import LabError
from hwaac.lab.names import check_device_name

IFNAMSIZ = 15  # longest Linux interface name (IFNAMSIZ - 1)
ALL_NODES_UP_TO = 64
DEFAULT_NODES_PER_SU = 2


@dataclass(frozen=True, slots=True)
class Port:
    """A switch port as its config_db sets it."""

    name: str
    mtu: int | None
    admin_up: bool
    addresses: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Switch:
    name: str
    role: str
    config_db: dict[str, Any]
    ports: dict[str, Port]
    loopbacks: dict[str, tuple[str, ...]]  # Loopback0 -> its addresses


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    kind: str
    su: int | None
    folder: Path


@dataclass(frozen=True, slots=True)
class Cable:
    id: str
    kind: str
    a: tuple[str, str]
    b: tuple[str, str]
    addrs: tuple[str, str] = ("", "")  # the plan's address of each end ("" when it has none)


@dataclass(slots=True)
class Fabric:
    """The lab's part of a rendered fabric."""

    name: str
    render_dir: Path
    switches: dict[str, Switch] = field(default_factory=dict)
    hosts: dict[str, Host] = field(default_factory=dict)
    cables: dict[str, Cable] = field(default_factory=dict)
    nodes_total: int = 0


def parse_nodes_per_su(text: str | None) -> int | None:
    """``--nodes-per-su``: a positive integer, "all" (None), or None for the default.

    Raises:
        LabError: anything else.
    """
    if text is None:
        return -1
    if text == "all":
        return None
    if text.isdigit() and int(text) > 0:
        return int(text)
    raise LabError(f"--nodes-per-su {text!r} is not valid: a positive integer or 'all'")


def read_fabric(render_dir: Path, nodes_per_su: int | None = -1) -> Fabric:
    """The devices and cables of the lab for ``render_dir``.

    Args:
        nodes_per_su: nodes per SU; None: all; -1: the default (all up to 64 nodes, else 2).

    Raises:
        LabError: the folder is not a rendered fabric, or a file in it is not what the plan says.
    """
    from hwaac.plan.serialize import read_plan

    plan_path = render_dir / "plan.json"
    try:
        plan = read_plan(plan_path)
    except FileNotFoundError:
        raise LabError(
            f"{plan_path}: no such file; render the fabric first (hwaac plan FABRIC -o {render_dir})"
        ) from None
    except orjson.JSONDecodeError as exc:
        raise LabError(f"{plan_path}: not JSON ({exc})") from None
    except ValueError as exc:  # not an hwaac plan: read_plan names the file and the format it got
        raise LabError(str(exc)) from None
    nodes = plan.get("nodes") or {}
    fab = Fabric(name=str(plan.get("fabric", "")), render_dir=render_dir.resolve(), nodes_total=len(nodes))
    per_su = nodes_per_su if nodes_per_su != -1 else (None if len(nodes) <= ALL_NODES_UP_TO else DEFAULT_NODES_PER_SU)
    for name, sw in (plan.get("switches") or {}).items():
        fab.switches[name] = _switch(render_dir, check_device_name(name), sw)
    by_su: dict[Any, list[tuple[int, str]]] = {}
    for name, node in nodes.items():
        by_su.setdefault(node.get("su"), []).append((int(node.get("slot") or 0), check_device_name(name)))
    for su, members in by_su.items():
        for _, name in sorted(members)[: per_su if per_su is not None else len(members)]:
            folder = render_dir / "hosts" / name
            if not folder.is_dir():
                raise LabError(f"{folder}: no such folder (the plan has node {name}; re-render the fabric)")
            fab.hosts[name] = Host(name=name, kind=str(nodes[name].get("kind", "")), su=su, folder=folder)
    for cid, link in (plan.get("links") or {}).items():
        a, b = (str(link["a"][0]), str(link["a"][1])), (str(link["b"][0]), str(link["b"][1]))
        if not all(dev in fab.switches or dev in fab.hosts for dev, _ in (a, b)):
            continue
        for dev, port in (a, b):
            if len(port) > IFNAMSIZ:
                raise LabError(
                    f"{plan_path}: cable {cid}: port {dev}:{port} is longer than a Linux interface name "
                    f"may be ({IFNAMSIZ})"
                )
            if dev in fab.switches and port not in fab.switches[dev].ports:
                raise LabError(f"{render_dir}/switches/{dev}/config_db.json: PORT has no {port} (cable {cid})")
        addrs = (str(link["a"][2]) if len(link["a"]) > 2 else "", str(link["b"][2]) if len(link["b"]) > 2 else "")
        fab.cables[cid] = Cable(id=cid, kind=str(link.get("kind", "")), a=a, b=b, addrs=addrs)
    return fab


def _switch(render_dir: Path, name: str, sw: dict[str, Any]) -> Switch:
    path = render_dir / "switches" / name / "config_db.json"
    try:
        db = json.loads(path.read_text())
    except FileNotFoundError:
        raise LabError(f"{path}: no such file (the plan has switch {name}; re-render the fabric)") from None
    except ValueError as exc:
        raise LabError(f"{path}: not JSON ({exc})") from None
    addrs: dict[str, list[str]] = {}
    for key in db.get("INTERFACE") or {}:
        port, sep, prefix = key.partition("|")
        if sep:
            addrs.setdefault(port, []).append(prefix)
    ports: dict[str, Port] = {}
    for port, fields in (db.get("PORT") or {}).items():
        mtu = fields.get("mtu")
        if mtu is not None and not str(mtu).isdigit():
            raise LabError(f"{path}: PORT|{port} mtu: {mtu!r} is not valid: an integer")
        ports[port] = Port(
            name=port,
            mtu=int(mtu) if mtu is not None else None,
            admin_up=str(fields.get("admin_status", "up")) == "up",
            addresses=tuple(addrs.get(port, ())),
        )
    loopbacks: dict[str, list[str]] = {}
    for key in db.get("LOOPBACK_INTERFACE") or {}:
        lo, sep, prefix = key.partition("|")
        loopbacks.setdefault(lo, [])
        if sep:
            loopbacks[lo].append(prefix)
    for lo in loopbacks:
        if len(lo) > IFNAMSIZ:
            raise LabError(f"{path}: LOOPBACK_INTERFACE {lo!r} is longer than a Linux interface name ({IFNAMSIZ})")
    return Switch(
        name=name,
        role=str(sw.get("role", "")),
        config_db=db,
        ports=ports,
        loopbacks={k: tuple(v) for k, v in loopbacks.items()},
    )
