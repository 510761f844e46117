"""Desired Lustre client state of a GPU node: ``lustre-client.json`` (read by the role ``lustre_client``).

Rendered only when the intent has a ``storage`` section, and only for GPU nodes: client version, packages, LNet
networks on the node's rail interfaces, and per file system its MGS NIDs, mount point, options and tunables
scoped to that file system's devices (``osc.<p>`` -> ``osc.<fs>-OST*.<p>``). The shape and the scoping rules:
docs/render-host.md.
"""

from __future__ import annotations

import orjson

from hwaac.model.intent import StorageSection
from hwaac.render.host._context import HostContext, Rail

PATH = "lustre-client.json"

SCOPES = {
    "osc": "osc.{fs}-OST*.{param}",
    "mdc": "mdc.{fs}-MDT*.{param}",
    "llite": "llite.{fs}-*.{param}",
    "ldlm.namespaces": "ldlm.namespaces.{fs}-*.{param}",
}


def scoped_tunable(fsname: str, key: str) -> str:
    """The lctl parameter pattern of intent tunable ``key`` (``<type>.<param>``) for file system ``fsname``:
    ``("lfs1", "osc.max_rpcs_in_flight")`` -> ``"osc.lfs1-OST*.max_rpcs_in_flight"`` (table in the module
    docstring).

    Raises:
        ValueError: ``key`` does not start with osc., mdc., llite. or ldlm.namespaces. (the intent rules refuse it
        first, rule ``storage-bad-tunable``).
    """
    for prefix, pattern in sorted(SCOPES.items(), key=lambda kv: -len(kv[0])):
        if key.startswith(prefix + "."):
            return pattern.format(fs=fsname, param=key[len(prefix) + 1 :])
    raise ValueError(f"tunable {key!r}: not osc., mdc., llite. or ldlm.namespaces.")


LNET_REQUIRED = "x-systemd.requires=lnet.service"


def mount_options(options: list[str]) -> list[str]:
    """Mount options as written without repeats, with ``_netdev`` and ``x-systemd.requires=lnet.service``
    appended when missing.

    ``_netdev``: a network file system must be mounted after the network is up, or boot can hang (AWS FSx for
    Lustre user guide, "Mounting automatically"). ``x-systemd.requires=lnet.service``
    (systemd.mount(5): Requires= and After= on the unit): without it the mount and lnet.service start side by
    side at boot, and a mount that wins loads LNet with its default networks="tcp" -- the wrong NID (lustre-release
    lnet/lnet/api-ni.c ``lnet_get_networks``; stackhpc/ansible-slurm-appliance mounts with the same option).
    """
    out = list(dict.fromkeys(options))
    for required in ("_netdev", LNET_REQUIRED):
        if required not in out:
            out.append(required)
    return out


def _interfaces(rails: list[Rail], wanted: list[int], node_name: str) -> list[str]:
    by_rail: dict[int, list[Rail]] = {}
    for r in rails:
        by_rail.setdefault(r.rail, []).append(r)
    out: list[str] = []
    for rail in wanted:
        ports = by_rail.get(rail)
        if not ports:
            raise ValueError(f"{node_name}: storage.lnet names rail {rail}, but the node has no port on it")
        out.extend(p.interface for p in sorted(ports, key=lambda p: p.plane))
    return out


def lustre_client(node_name: str, rails: list[Rail], storage: StorageSection) -> dict[str, object]:
    """The ``lustre-client.json`` document of one GPU node (shape in the module docstring).

    Args:
        node_name: the node (named in errors).
        rails: the node's NIC ports in NIC order (``hwaac.render.host._context.rails_of``).
        storage: the intent's storage section, validated (:func:`hwaac.model.storage_rules.check_storage`).

    Raises:
        ValueError: a network names a rail the node has no port on (GPU nodes are cabled on every rail, so only a
        hand-built plan can get here).
    """
    lnet = storage.lnet
    networks = []
    for n in lnet.networks:
        interfaces = _interfaces(rails, n.rails, node_name) if n.rails is not None else list(n.interfaces or [])
        networks.append(
            {
                "net": n.net,
                "interfaces": interfaces,
                "tunables": n.tunables.model_dump(exclude_none=True),
                "lnd_tunables": n.lnd_tunables.model_dump(exclude_none=True),
            }
        )
    filesystems = [
        {
            "name": fs.name,
            "mgs": [node.split(",") for node in fs.mgs],
            "mount_point": fs.mount_point,
            "options": mount_options(fs.options),
            "tunables": {scoped_tunable(fs.name, k): str(v) for k, v in fs.tunables.items()},
        }
        for fs in storage.filesystems
    ]
    return {
        "client_version": storage.client_version,
        "packages": {"flavor": storage.packages},
        "lnet": {"networks": networks, "global": lnet.global_settings()},
        "filesystems": filesystems,
    }


def render_lustre_client(node_name: str, rails: list[Rail], storage: StorageSection, ctx: HostContext) -> str:
    """The text of ``lustre-client.json`` for one GPU node; nodes with the same rail interfaces share one text
    (memoised in ``ctx``), so a fabric of thousands of nodes renders it once per interface layout."""
    key = ("lustre", tuple((r.rail, r.plane, r.interface) for r in rails))
    text = ctx.memo.get(key)
    if text is None:
        doc = lustre_client(node_name, rails, storage)
        text = orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"
        ctx.memo[key] = text
    return text
