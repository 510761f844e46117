"""Simulated hardware for a whole fabric: one folder per host under ``--out``, for playbooks run on localhost.

    python -m tests.fakes.simulate --render build/demo --out build/sim [--reset]

For each switch of the render folder (``switches/<name>/config_db.json``): ``<out>/<name>/state/config_db.json``,
the running CONFIG_DB of a freshly installed SONiC switch (platform metadata, management network, the ports with
their platform fields only), read and written by the fakes ``sonic-cfggen``, ``config`` and ``vtysh``.
For each node (``hosts/<name>/nic-roce.json``): ``<out>/<name>/sys`` and ``<out>/<name>/configfs`` (the RoCE sysfs
and configfs files of its NIC ports at their defaults, :mod:`tests.fakes.sysfs`), a scratch root ``<out>/<name>/root``
whose netplan folder holds the management interface's own netplan file, and ``<out>/<name>/state`` for the NIC
fakes (which start from factory defaults).

Existing folders are kept (the simulated hosts remember what earlier runs set), unless ``--reset``.
The inventory ``inventory/demo/simulated`` points every host at its folder.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from tests.fakes.sysfs import build_roce_tree

MGMT_NETPLAN = """network:
  version: 2
  ethernets:
    eth0:
      dhcp4: true
"""


def factory_switch_config(rendered: dict[str, Any]) -> dict[str, Any]:
    """A freshly installed switch for ``rendered`` (its config_db): platform metadata, the management network, and
    PORT with the platform's fields only (alias, lanes, speed, index: what the SKU's port_config.ini gives)."""
    return {
        "DEVICE_METADATA": {"localhost": {"hostname": "sonic", "hwsku": "Mellanox-SN5600-O128",
                                          "mac": "00:00:5e:00:53:01", "platform": "x86_64-nvidia_sn5600-r0"}},
        "MGMT_INTERFACE": {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}},
        "MGMT_PORT": {"eth0": {"alias": "eth0", "admin_status": "up"}},
        "PORT": {k: {f: v for f, v in e.items() if f in ("alias", "lanes", "speed", "index")}
                 for k, e in rendered.get("PORT", {}).items()},
        "FEATURE": {"bgp": {"state": "enabled"}},
    }


def simulate(render: Path, out: Path, *, reset: bool = False) -> dict[str, int]:
    """Create the simulated hosts of the fabric rendered in ``render`` under ``out``; returns counts per kind.

    Raises:
        FileNotFoundError: ``render`` holds no ``switches/`` or ``hosts/`` folder (not an hwaac render).
    """
    switches = sorted(p for p in (render / "switches").glob("*/config_db.json"))
    nodes = sorted(p for p in (render / "hosts").glob("*/nic-roce.json"))
    if not switches and not nodes:
        raise FileNotFoundError(f"{render}: no switches/*/config_db.json or hosts/*/nic-roce.json "
                                "(render the fabric first: hwaac plan FABRIC -o DIR)")
    made = {"switches": 0, "nodes": 0}
    for path in switches + nodes:
        host = out / path.parent.name
        if reset and host.exists():
            shutil.rmtree(host)
        if host.exists():
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
    return made


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--render", required=True, type=Path, help="folder written by hwaac plan / hwaac netbox render")
    ap.add_argument("--out", required=True, type=Path, help="folder of the simulated hosts")
    ap.add_argument("--reset", action="store_true", help="start every host from factory state again")
    args = ap.parse_args(argv)
    try:
        made = simulate(args.render, args.out, reset=args.reset)
    except FileNotFoundError as exc:
        print(f"simulate: {exc}", file=sys.stderr)
        return 2
    print(f"simulated hosts in {args.out}: {made['switches']} new switches, {made['nodes']} new nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
