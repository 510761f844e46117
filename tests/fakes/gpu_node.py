"""State of one simulated GPU node, shared by the health-tool fakes in ``tests/fakes/bin``.

The fakes (``nvidia-smi``, ``dcgmi``, ``journalctl``, ``all_reduce_perf``, ``mpirun``, ``nvbandwidth``,
``ibstat``, ``ib_write_bw``) read the node's state from ``$HWAAC_FAKE_STATE/gpu_node.json`` (defaults below when
missing) and print output in the layout of the recorded real output in ``tests/fixtures/health/``. Nodes of one
test live side by side: ``$HWAAC_FAKE_STATE`` is ``<root>/<node name>``, so a fake that talks to a peer
(``ib_write_bw``'s client, ``mpirun``) finds the peer's state in ``<root>/<peer name>``. The fake sysfs tree of
the node's port counters is ``$HWAAC_FAKE_STATE/sys`` (``class/infiniband/<dev>/ports/1/{counters,hw_counters}``).

Standard library only: the fakes import this file by path (they run under any Python 3).

Knobs (``gpu_node.json``), all optional; a healthy HGX H200 8 x 400G RoCE node by default:

=====================  ==========================================================================================
``gpus``               GPUs on the board (8)
``product_name``       nvidia-smi's product name ("NVIDIA H200")
``missing_gpus``       indices nvidia-smi does not list (fallen off the bus)
``remap_pending``      indices with a pending row remap (``remapped_rows`` pending Yes)
``remap_failure``      indices with a row-remap failure
``dbe_volatile``       {index: count} volatile DRAM uncorrectable ECC errors
``hw_slowdown``        indices with the HW slowdown clock event reason active
``pcie_width``         {index: lanes} a GPU trained narrower than x16
``nvlink_down``        {index: [link, ...]} inactive NVLink links
``xids``               [{"gpu": i, "xid": n, "message": "..."}] kernel lines journalctl prints, stamped now
``dcgm_fail``          {"test": "memory", "gpu": i, "error_id": n, "severity": s, "message": "..."} or null
``nccl_busbw``         single-node all_reduce busbw at 16 GiB, GB/s (478.0)
``nccl_multi_busbw``   multi-node ring busbw at 16 GiB, GB/s (380.0); the slowest node of an mpirun sets it
``nvbw_h2d``           host->GPU copy, GB/s (55.0)
``nvbw_d2d``           GPU<->GPU copy, GB/s (370.0)
``rails``              RDMA devices mlx5_0.. (8)
``link_layer``         Ethernet | InfiniBand ("Ethernet")
``rate``               port rate, Gb/s (400)
``dead_rails``         rail indices whose port is Down/Polling: ibstat shows it, ib_write_bw fails, and every
                       ib_write_bw run over it adds to its ``link_downed`` and ``symbol_error`` counters
``ib_write_bw``        Gb/s a healthy rail measures (397.5)
=====================  ==========================================================================================
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

STATE_FILE = "gpu_node.json"

DEFAULTS: dict[str, Any] = {
    "gpus": 8,
    "product_name": "NVIDIA H200",
    "missing_gpus": [],
    "remap_pending": [],
    "remap_failure": [],
    "dbe_volatile": {},
    "hw_slowdown": [],
    "pcie_width": {},
    "nvlink_down": {},
    "xids": [],
    "dcgm_fail": None,
    "nccl_busbw": 478.0,
    "nccl_multi_busbw": 380.0,
    "nvbw_h2d": 55.0,
    "nvbw_d2d": 370.0,
    "rails": 8,
    "link_layer": "Ethernet",
    "rate": 400,
    "dead_rails": [],
    "ib_write_bw": 397.5,
}


def state_dir(env: dict[str, str] | None = None) -> Path:
    """The node's state folder (``$HWAAC_FAKE_STATE``); fakes exit 3 with a message when it is not set."""
    value = (env or os.environ).get("HWAAC_FAKE_STATE")
    if not value:
        raise SystemExit("fake: HWAAC_FAKE_STATE is not set (the folder of this simulated node's state)")
    return Path(value)


def load(folder: Path | None = None) -> dict[str, Any]:
    """The node's knobs merged over :data:`DEFAULTS` (keys of ``dbe_volatile`` etc. as strings)."""
    folder = folder or state_dir()
    path = folder / STATE_FILE
    data = json.loads(path.read_text()) if path.exists() else {}
    unknown = sorted(set(data) - set(DEFAULTS) - {"_"})
    if unknown:
        raise SystemExit(f"fake: {path}: unknown knob(s) {', '.join(unknown)}; valid: {', '.join(DEFAULTS)}")
    return {**DEFAULTS, **data}


def save(folder: Path, **knobs: Any) -> Path:
    """Write (merge) knobs into ``folder/gpu_node.json``; creates the folder. Returns the file."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / STATE_FILE
    data = json.loads(path.read_text()) if path.exists() else {}
    unknown = sorted(set(knobs) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown knob(s) {', '.join(unknown)}; valid: {', '.join(DEFAULTS)}")
    data.update(knobs)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path


def peer_dir(peer: str, folder: Path | None = None) -> Path:
    """The state folder of another simulated node (a sibling of this node's)."""
    return (folder or state_dir()).parent / peer
