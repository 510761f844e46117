"""Printing code shared by the GPU-side fakes (``bin/nvidia-smi``, ``dcgmi``, ``journalctl``, ``all_reduce_perf``,
``mpirun``, ``nvbandwidth``): identities of the simulated GPUs, the knobs of :mod:`gpu_node` read per GPU, and a
JSON writer in the layout of jsoncpp's ``StyledStreamWriter`` (what ``dcgmi ... -j`` prints).

Standard library only; the fakes import this file by path (``sys.path`` gets this file's folder), like
:mod:`gpu_node`.

Identities (made up, in the placeholder style of ``tests/fixtures/health/nvidia-smi/h200-580.159.04/README.md``):
GPU ``i`` of a node whose name ends in the number ``N`` (``node01`` -> 1) has the PCI bus of HGX boards
(:data:`HGX_BUSES`: ``0000:18/2A/3A/5D/9A/AB/BA/DB:00.0``), UUID ``GPU-00000000-1111-2222-3333-4444NNNN00ii`` and
board serial ``00000NNNN00ii`` (both unique across the nodes of a test). GPU indices are board indices: a GPU listed
in ``missing_gpus`` leaves a gap (real nvidia-smi would renumber); CUDA tools (nccl-tests, nvbandwidth) number the
visible GPUs 0.. as CUDA does.
"""

from __future__ import annotations

import json
import os
import re
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import gpu_node  # noqa: E402  (by path, see the module docstring)

FIXTURES = HERE.parent / "fixtures" / "health"
H200_XML = FIXTURES / "nvidia-smi" / "h200-580.159.04" / "q-x.xml"
DRIVER_VERSION = "580.159.04"  # the recorded H200 (tests/fixtures/health/nvidia-smi/h200-580.159.04)
CUDA_VERSION = "13.0"
HGX_BUSES = ("18", "2A", "3A", "5D", "9A", "AB", "BA", "DB")


def bus(i: int) -> str:
    """The PCI bus (two hex digits, upper case) of GPU ``i``; past the eighth, made-up buses from E0."""
    return HGX_BUSES[i] if i < len(HGX_BUSES) else f"{0xE0 + i - len(HGX_BUSES):02X}"


def node_name(folder: Path | None = None) -> str:
    """The simulated node's host name: the name of its state folder."""
    return (folder or gpu_node.state_dir()).name


def node_number(name: str) -> int:
    """The number a node name ends in (``node01`` -> 1), 0 when none; keeps identities unique per node."""
    m = re.search(r"(\d+)$", name)
    return int(m.group(1)) % 10000 if m else 0


def uuid(i: int, node: str) -> str:
    return f"GPU-00000000-1111-2222-3333-4444{node_number(node):04d}{i:04d}"


def serial(i: int, node: str) -> str:
    return f"00000{node_number(node):04d}{i:04d}"


def indices(knobs: dict[str, Any], name: str) -> set[int]:
    """A list knob of GPU indices as ints."""
    return {int(i) for i in knobs.get(name) or []}


def per_gpu(knobs: dict[str, Any], name: str) -> dict[int, Any]:
    """A ``{index: value}`` knob with int keys (JSON keeps them as strings)."""
    return {int(k): v for k, v in (knobs.get(name) or {}).items()}


def visible(knobs: dict[str, Any]) -> list[int]:
    """Board indices of the GPUs the driver lists (``gpus`` minus ``missing_gpus``)."""
    missing = indices(knobs, "missing_gpus")
    return [i for i in range(int(knobs["gpus"])) if i not in missing]


def load(folder: Path | None = None) -> dict[str, Any]:
    return gpu_node.load(folder)


def now() -> datetime:
    return datetime.now(timezone.utc)  # noqa: UP017  (not datetime.UTC: the fakes run under any python3)


def peer_knobs(host: str) -> dict[str, Any] | None:
    """Knobs of node ``host`` (this node or a sibling state folder), None when no such folder exists."""
    own = gpu_node.state_dir()
    folder = own if host == own.name else gpu_node.peer_dir(host)
    return gpu_node.load(folder) if folder.is_dir() else None


def mpi_hosts() -> list[str]:
    """Hosts of the fake mpirun run this process belongs to (``HWAAC_FAKE_MPI_HOSTS``), [] outside mpirun."""
    return [h for h in os.environ.get("HWAAC_FAKE_MPI_HOSTS", "").split(",") if h]


# -- jsoncpp StyledStreamWriter ------------------------------------------------------------------------------------


class StyledJson:
    """jsoncpp ``StyledStreamWriter`` as DCGM's copy writes: members sorted, tab indentation, ``"key" :`` then the
    value, objects and arrays on the next line, one array element a line (even a short array: the recorded
    ``"header"`` of ``dcgmi health``, where stock jsoncpp would write ``[ "..." ]``). ``trailing_space``: the
    separator before a line break is ``" : "`` in the recorded ``dcgmi health -c -j`` output and ``" :"`` in the
    recorded DCGM 4.x diag output (``tests/fixtures/health/dcgmi``); the writer reproduces both byte for byte."""

    def __init__(self, trailing_space: bool) -> None:
        self.trailing_space = trailing_space
        self.out: list[str] = []
        self.indent = ""
        self.indented = True

    def dumps(self, value: Any) -> str:
        self.out, self.indent, self.indented = [], "", True
        self._value(value)
        self.out.append("\n")
        text = "".join(self.out)
        return text if self.trailing_space else text.replace(" : \n", " :\n")

    def _newline(self) -> None:
        self.out.append("\n" + self.indent)

    def _with_indent(self, text: str) -> None:
        if not self.indented:
            self._newline()
        self.out.append(text)
        self.indented = False

    @staticmethod
    def _scalar(value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if value is None:
            return "null"
        if isinstance(value, (dict, list)):  # only empty ones are written inline
            return "{}" if isinstance(value, dict) else "[]"
        if isinstance(value, (int, float)):
            return json.dumps(value)
        return json.dumps(str(value))

    def _value(self, value: Any) -> None:
        if isinstance(value, dict):
            if not value:
                self.out.append("{}")
                return
            self._with_indent("{")
            self.indent += "\t"
            keys = sorted(value)
            for n, key in enumerate(keys):
                self._with_indent(json.dumps(str(key)))
                self.out.append(" : ")
                self._value(value[key])
                if n < len(keys) - 1:
                    self.out.append(",")
            self.indent = self.indent[:-1]
            self._with_indent("}")
        elif isinstance(value, list):
            self._array(value)
        else:
            self.out.append(self._scalar(value))

    def _array(self, value: list[Any]) -> None:
        if not value:
            self.out.append("[]")
            return
        self._with_indent("[")
        self.indent += "\t"
        for n, child in enumerate(value):
            if isinstance(child, (dict, list)) and child:
                if not self.indented:
                    self._newline()
                self.indented = True
                self._value(child)
                self.indented = False
            else:
                self._with_indent(self._scalar(child))
            if n < len(value) - 1:
                self.out.append(",")
        self.indent = self.indent[:-1]
        self._with_indent("]")


def fail(message: str, code: int, *, stream: Any = None) -> int:
    """Print ``message`` (stderr unless told) and return ``code``: ``sys.exit(fail(...))``."""
    print(message, file=stream or sys.stderr)
    return code
