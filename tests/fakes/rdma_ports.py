"""The RDMA ports of a simulated GPU node as ``ibstatus``, ``ibv_devinfo`` and ``rdma statistic show`` print them.

One model for the three fakes in ``tests/fakes/bin``: ``mlx5_0 .. mlx5_<rails-1>``, one port each (ConnectX-7, part
4129, firmware 28.39.1002 as the ``ibstat`` fake), state from the node's knobs (``gpu_node.py``: ``rails``,
``link_layer``, ``rate``, ``dead_rails``). A dead rail is DOWN/Polling with the rate the recorded Polling ports
print (10 Gb/s on InfiniBand, 40 on Ethernet, as the ``ibstat`` fake). Layouts follow the recorded output in
``tests/fixtures/health/{ibstatus,ibv_devinfo,rdma-statistic}/`` and the printing code named in each function;
counters are the node's fake sysfs ``hw_counters`` (``nic_counters.py``), the values ``rdma statistic`` reads through
netlink. GUIDs and GIDs are the fake's own.

Standard library only; the fakes import this file by path.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

FIRMWARE = "28.39.1002"
POLLING_RATE = {"InfiniBand": 10, "Ethernet": 40}
SPEED_NAME = {10: "4X SDR", 40: "4X QDR", 100: "4X EDR", 200: "4X HDR", 400: "4X NDR", 800: "4X XDR"}


def devices(knobs: dict[str, Any]) -> list[str]:
    return [f"mlx5_{i}" for i in range(int(knobs["rails"]))]


def port(knobs: dict[str, Any], rail: int) -> dict[str, Any]:
    """``up``, ``rate`` (Gb/s) and ``layer`` of the rail's port 1."""
    dead = rail in {int(r) for r in knobs["dead_rails"]}
    layer = knobs["link_layer"]
    return {"up": not dead, "rate": POLLING_RATE.get(layer, 40) if dead else int(knobs["rate"]), "layer": layer}


def _guid_low(node: str, rail: int) -> int:
    return (zlib.crc32(node.encode()) & 0xFFFF) << 8 | (rail * 2)


def ibstatus(knobs: dict[str, Any], node: str) -> str:
    """infiniband-diags ``scripts/ibstatus``: per port a header, its sysfs files after tab-aligned labels, a blank."""
    out = []
    for rail, dev in enumerate(devices(knobs)):
        p = port(knobs, rail)
        low = _guid_low(node, rail)
        gid = f"fe80:0000:0000:0000:a288:c2ff:fe{low >> 16 & 0xFF:02x}:{low & 0xFFFF:04x}"
        out += [
            f"Infiniband device '{dev}' port 1 status:",
            f"\tdefault gid:\t {gid}",
            f"\tbase lid:\t {'0x0' if p['layer'] == 'Ethernet' else hex(100 + rail)}",
            f"\tsm lid:\t\t {'0x0' if p['layer'] == 'Ethernet' else '0x1'}",
            f"\tstate:\t\t {'4: ACTIVE' if p['up'] else '1: DOWN'}",
            f"\tphys state:\t {'5: LinkUp' if p['up'] else '2: Polling'}",
            f"\trate:\t\t {p['rate']} Gb/sec ({SPEED_NAME.get(p['rate'], '4X')})",
            f"\tlink_layer:\t {p['layer']}",
            "",
        ]
    return "\n".join(out) + "\n"


def ibv_devinfo(knobs: dict[str, Any], node: str) -> str:
    """rdma-core ``libibverbs/examples/devinfo.c`` ``print_hca_cap()`` without ``-v`` (upstream layout, tabs)."""
    out = []
    for rail, dev in enumerate(devices(knobs)):
        p = port(knobs, rail)
        low = _guid_low(node, rail)
        guid = f"a088:c203:00{low >> 16 & 0xFF:02x}:{low & 0xFFFF:04x}"
        out += [
            f"hca_id:\t{dev}",
            "\ttransport:\t\t\tInfiniBand (0)",
            f"\tfw_ver:\t\t\t\t{FIRMWARE}",
            f"\tnode_guid:\t\t\t{guid}",
            f"\tsys_image_guid:\t\t\t{guid}",
            "\tvendor_id:\t\t\t0x02c9",
            "\tvendor_part_id:\t\t\t4129",
            "\thw_ver:\t\t\t\t0x0",
            "\tboard_id:\t\t\tMT_0000000838",
            "\tphys_port_cnt:\t\t\t1",
            "\t\tport:\t1",
            f"\t\t\tstate:\t\t\t{'PORT_ACTIVE (4)' if p['up'] else 'PORT_DOWN (1)'}",
            "\t\t\tmax_mtu:\t\t4096 (5)",
            f"\t\t\tactive_mtu:\t\t{'4096 (5)' if p['up'] else '1024 (3)'}",
            f"\t\t\tsm_lid:\t\t\t{0 if p['layer'] == 'Ethernet' else 1}",
            f"\t\t\tport_lid:\t\t{0 if p['layer'] == 'Ethernet' else 100 + rail}",
            "\t\t\tport_lmc:\t\t0x00",
            f"\t\t\tlink_layer:\t\t{p['layer']}",
            "",
        ]
    return "\n".join(out) + "\n"


def rdma_statistic(knobs: dict[str, Any], sys_root: Path) -> str:
    """iproute2 ``rdma/stat.c`` ``rdma statistic show``: one ``link <dev>/<port>`` line per port with its hw counters
    as ``name value`` pairs (the recorded MLNX iproute2 layout), read from the node's fake sysfs ``hw_counters``
    (``lifespan``, the driver's cache age, is no counter and not printed)."""
    lines = []
    for dev in devices(knobs):
        folder = sys_root / "class" / "infiniband" / dev / "ports" / "1" / "hw_counters"
        pairs = " ".join(
            f"{path.name} {int(path.read_text().strip() or 0)}"
            for path in sorted(folder.iterdir())
            if path.name != "lifespan"
        )
        lines.append(f"link {dev}/1 {pairs}")
    return "\n".join(lines) + "\n"
