"""Simulated hardware for a whole fabric: one folder per host under ``--out``, for playbooks run on localhost.

    python -m tests.fakes.simulate --render build/demo --out build/sim [--reset]

For each switch of the render folder (``switches/<name>/config_db.json``): ``<out>/<name>/state/config_db.json``,
the running CONFIG_DB of a freshly installed SONiC switch (platform metadata, management network, the ports with
their platform fields only), read and written by the fakes ``sonic-cfggen``, ``config`` and ``vtysh``.
For each node (``hosts/<name>/nic-roce.json``): ``<out>/<name>/sys`` and ``<out>/<name>/configfs`` (the RoCE sysfs
and configfs files of its NIC ports at their defaults, :mod:`tests.fakes.sysfs`), a scratch root ``<out>/<name>/root``
whose netplan folder holds the management interface's own netplan file, and ``<out>/<name>/state`` for the NIC
fakes (which start from factory defaults).
For each node whose render folder also has ``lustre-client.json`` (a GPU node of an intent with a storage
section), a Lustre client with its packages installed and LNet not started (:func:`lustre_client_state`):
``<out>/<name>/state/lnet.json`` for the ``lnetctl`` fake (modules not loaded, nothing configured, the node's
interfaces and their IPv4 addresses) and the packaged ``lnet.service`` (not enabled) in ``etc/systemd/system`` of
the node's scratch root ``<out>/<name>/root`` (its ``lustre_client_root``), the folder that the role's
``systemd_dir`` and drop-ins use; point the ``systemctl`` fake at it with ``HWAAC_FAKE_SYSTEMD_DIRS`` (a real node
has the packaged unit in /usr/lib/systemd/system; one folder keeps the fake's lookup simple). The ``modinfo`` and
``ofed_info`` fakes need no state: without one, ko2iblnd is built for the running kernel and DOCA-OFED 24.07, which
the node runs (their docstrings). Nothing is mounted (no ``proc_mounts``).

Existing folders are kept (the simulated hosts remember what earlier runs set), unless ``--reset``.
The inventory ``inventory/demo/simulated`` points every host at its folder.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import shutil
import sys
import zlib
from pathlib import Path
from typing import Any

import yaml

from tests.fakes.sysfs import build_roce_tree

MGMT_NETPLAN = """network:
  version: 2
  ethernets:
    eth0:
      dhcp4: true
"""


# lustre-release lustre/scripts/systemd/lnet.service.in as of 2.15 (the Description, Type, RemainAfterExit and
# [Install] lines are those of every release, e.g. the 2.12 file in lustre/lustre-release), with the paths the RPMs
# substitute: @sbindir@ = /usr/sbin, @sysconfdir@ = /etc (installed as /usr/lib/systemd/system/lnet.service holding
# "ExecStart=/usr/sbin/lnetctl import /etc/lnet.conf", which public OCI Lustre setup scripts edit with sed). The fake
# systemctl never runs ExecStart=/ExecStop=.
LNET_SERVICE = """[Unit]
Description=lnet management

Requires=network-online.target
After=network-online.target openibd.service rdma.service opa.service

ConditionPathExists=!/proc/sys/lnet/

[Service]
Type=oneshot
RemainAfterExit=true
ExecStart=/sbin/modprobe lnet
ExecStart=/usr/sbin/lnetctl lnet configure
ExecStart=/usr/sbin/lnetctl import /etc/lnet.conf
ExecStop=/usr/sbin/lustre_rmmod

[Install]
WantedBy=multi-user.target
"""
# interfaces LNet names that the render gives no IPv4 address (DHCP, or outside the rails' netplan) get a stand-in
# address in 198.18.0.0/15 (RFC 2544, never routed), fixed per node and interface
STAND_IN_NET = ipaddress.IPv4Network("198.18.0.0/15")


def rendered_ipv4(host_dir: Path) -> dict[str, str]:
    """Interface -> its first static IPv4 address (without prefix length) in the node's rendered netplan files
    (``<host_dir>/netplan/*.yaml``, ``network.ethernets|bonds|vlans.<name>.addresses``), e.g.
    ``{"rail0": "172.16.0.1"}``. Files are read in name order; an interface in several files keeps its first.

    Raises:
        ValueError: a netplan file is not YAML or has no ``network`` mapping (names the file).
    """
    found: dict[str, str] = {}
    for path in sorted((host_dir / "netplan").glob("*.yaml")):
        try:
            doc = yaml.safe_load(path.read_text())
        except yaml.YAMLError as exc:
            raise ValueError(f"{path}: not YAML: {exc}") from None
        network = doc.get("network") if isinstance(doc, dict) else None
        if not isinstance(network, dict):
            raise ValueError(f"{path}: no 'network' mapping (not a netplan file)")
        for kind in ("ethernets", "bonds", "vlans"):
            for name, conf in (network.get(kind) or {}).items():
                for addr in (conf or {}).get("addresses") or []:
                    text = addr if isinstance(addr, str) else next(iter(addr), "")  # netplan allows {addr: {...}}
                    try:
                        iface = ipaddress.ip_interface(text)
                    except ValueError:
                        continue
                    if iface.version == 4:
                        found.setdefault(str(name), str(iface.ip))
                        break
    return found


def stand_in_ipv4(node: str, interface: str) -> str:
    """A fixed address in 198.18.0.0/15 for an interface the render gives no IPv4 (CRC-32 of ``node/interface``;
    never the network or broadcast address)."""
    offset = zlib.crc32(f"{node}/{interface}".encode()) % (STAND_IN_NET.num_addresses - 2) + 1
    return str(STAND_IN_NET.network_address + offset)


def lustre_client_state(host_dir: Path, client: dict[str, Any]) -> dict[str, Any]:
    """The ``lnet.json`` of a freshly installed Lustre client (shape: the ``lnetctl`` fake's docstring).

    ``loaded`` and ``configured`` false (LNet modules not loaded: what the fakes also assume without the file),
    ``version`` = ``client_version`` of ``lustre-client.json`` with the ``lnetctl`` output layout of that release
    (``2.16`` from 2.16 on, else ``2.15``), ``interfaces`` = every interface with a static IPv4 address in the
    node's rendered netplan (the rails: a rail added to the intent later is already there) plus every interface
    that ``lnet.networks`` names, an interface without a rendered address getting :func:`stand_in_ipv4`.

    Args:
        host_dir: the node's render folder (``hosts/<node>``).
        client: its ``lustre-client.json`` (docs/render-host.md "lustre-client.json").

    Raises:
        ValueError: ``client_version`` is not ``MAJOR.MINOR[.PATCH...]``, or a netplan file cannot be read.
    """
    version = str(client.get("client_version", "2.15.5"))
    try:
        major_minor = tuple(int(x) for x in version.split(".")[:2])
    except ValueError:
        major_minor = ()
    if len(major_minor) != 2:
        raise ValueError(f"{host_dir / 'lustre-client.json'}: client_version {version!r}: not MAJOR.MINOR[.PATCH]")
    interfaces = rendered_ipv4(host_dir)
    for network in (client.get("lnet") or {}).get("networks") or []:
        for name in network.get("interfaces") or []:
            interfaces.setdefault(name, stand_in_ipv4(host_dir.name, name))
    return {
        "loaded": False,
        "configured": False,
        "layout": "2.16" if major_minor >= (2, 16) else "2.15",
        "version": version,
        "interfaces": interfaces,
        "nets": [],
    }


def factory_switch_config(rendered: dict[str, Any]) -> dict[str, Any]:
    """A freshly installed switch for ``rendered`` (its config_db): platform metadata, the management network,
    PORT with the platform's fields only (alias, lanes, speed, index: what the SKU's port_config.ini gives), and the
    PFC watchdog's GLOBAL entry as ``config pfcwd interval 200`` (or ``pfcwd start_default``) writes it.

    The config is YANG-valid (GCU refuses every patch while the running config is not). PFC_WD|GLOBAL must exist
    before a push through GCU: its field-operation validator (sonic-utilities generic_config_updater/
    field_operation_validators.py ``rdma_config_update_validator``) accepts only per-field PFC_WD changes, so GCU
    can add port entries and change POLL_INTERVAL but can never create the table or its GLOBAL entry."""
    return {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": "sonic",
                "hwsku": "Mellanox-SN5600-O128",
                "mac": "00:00:5e:00:53:01",
                "platform": "x86_64-nvidia_sn5600-r0",
            }
        },
        "MGMT_INTERFACE": {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}},
        "MGMT_PORT": {"eth0": {"alias": "eth0", "admin_status": "up"}},
        "PORT": {
            k: {f: v for f, v in e.items() if f in ("alias", "lanes", "speed", "index")}
            for k, e in rendered.get("PORT", {}).items()
        },
        "FEATURE": {"bgp": {"state": "enabled"}},
        "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "200"}},
    }


def simulate(render: Path, out: Path, *, reset: bool = False) -> dict[str, int]:
    """Create the simulated hosts of the fabric rendered in ``render`` under ``out``; returns counts per kind
    (``switches``, ``nodes``, ``lustre_clients``: the hosts made by this call, not those kept; a kept node that has
    a ``lustre-client.json`` but no Lustre state yet gets its client installed and counts in ``lustre_clients``).

    Raises:
        FileNotFoundError: ``render`` holds no ``switches/`` or ``hosts/`` folder (not an hwaac render).
        ValueError: a node's ``lustre-client.json`` or netplan file cannot be used (:func:`lustre_client_state`).
    """
    switches = sorted(p for p in (render / "switches").glob("*/config_db.json"))
    nodes = sorted(p for p in (render / "hosts").glob("*/nic-roce.json"))
    if not switches and not nodes:
        raise FileNotFoundError(
            f"{render}: no switches/*/config_db.json or hosts/*/nic-roce.json "
            "(render the fabric first: hwaac plan FABRIC -o DIR)"
        )
    made = {"switches": 0, "nodes": 0, "lustre_clients": 0}
    for path in switches + nodes:
        host = out / path.parent.name
        if reset and host.exists():
            shutil.rmtree(host)
        client = path.parent / "lustre-client.json"
        lnet = None  # read before anything is written: a bad file leaves no half-made host behind
        if path.name == "nic-roce.json" and client.is_file():
            lnet = lustre_client_state(path.parent, json.loads(client.read_text()))
        if host.exists():
            # a node simulated before its fabric had storage gets the Lustre client installed now
            if lnet is not None and not (host / "state" / "lnet.json").exists():
                _install_lustre_client(host, lnet)
                made["lustre_clients"] += 1
            continue
        (host / "state").mkdir(parents=True)
        if path.name == "config_db.json":
            cfg = factory_switch_config(json.loads(path.read_text()))
            (host / "state" / "config_db.json").write_text(json.dumps(cfg, indent=2, sort_keys=True))
            made["switches"] += 1
        else:
            ports = json.loads(path.read_text())["ports"]
            build_roce_tree(host / "sys", host / "configfs", [(p["interface"], p["hca"]) for p in ports])
            netplan = host / "root" / "etc" / "netplan"
            netplan.mkdir(parents=True)
            (netplan / "50-cloud-init.yaml").write_text(MGMT_NETPLAN)
            (netplan / "50-cloud-init.yaml").chmod(0o600)
            made["nodes"] += 1
            if lnet is not None:
                _install_lustre_client(host, lnet)
                made["lustre_clients"] += 1
    return made


def _install_lustre_client(host: Path, lnet: dict[str, Any]) -> None:
    """The simulated node's Lustre client as its packages leave it: ``state/lnet.json`` (LNet not loaded) and the
    packaged ``lnet.service`` in ``root/etc/systemd/system``."""
    (host / "state" / "lnet.json").write_text(json.dumps(lnet, indent=2, sort_keys=True) + "\n")
    units = host / "root" / "etc" / "systemd" / "system"
    units.mkdir(parents=True, exist_ok=True)
    (units / "lnet.service").write_text(LNET_SERVICE)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--render", required=True, type=Path, help="folder written by hwaac plan / hwaac netbox render")
    ap.add_argument("--out", required=True, type=Path, help="folder of the simulated hosts")
    ap.add_argument("--reset", action="store_true", help="start every host from factory state again")
    args = ap.parse_args(argv)
    try:
        made = simulate(args.render, args.out, reset=args.reset)
    except (FileNotFoundError, ValueError) as exc:
        print(f"simulate: {exc}", file=sys.stderr)
        return 2
    print(
        f"simulated hosts in {args.out}: {made['switches']} new switches, {made['nodes']} new nodes "
        f"({made['lustre_clients']} of them Lustre clients)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
