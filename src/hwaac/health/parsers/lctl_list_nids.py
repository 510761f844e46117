"""``lctl list_nids`` as facts: the node's NIDs and LNet networks, read by the one shared reader
(:func:`~hwaac.health.parsers.lustre_formats.read_list_nids`, the file ``plugins/module_utils/lustre_formats.py``
that the host module ``aiinfra.hwaac.lustre_mount`` uses too). No findings; :mod:`hwaac.health.lustre_lnet` judges.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hwaac.health.parsers.lustre_formats import read_list_nids
from hwaac.health.result import ToolResult


@dataclass
class ListNidsResult(ToolResult):
    """``nids`` as LNet prints them (network 0 without its number), ``nets`` each once, ``lnet_down``."""

    tool: str = "lctl list_nids"
    nids: list[str] = field(default_factory=list)
    nets: list[str] = field(default_factory=list)
    lnet_down: bool = False


def parse_lctl_list_nids(raw: str, *, exit_code: int | None = None) -> ListNidsResult:
    """Read ``lctl list_nids`` (stdout and stderr together). ``unknown``: lines that are not NIDs, no output, a
    failing exit status without the LNet-down message. Never raises."""
    read = read_list_nids(raw)
    result = ListNidsResult(nids=[f"{a}@{n}" for a, n in read.nids], nets=read.nets, lnet_down=read.lnet_down)
    result.unknown += [f"not a NID: {line[:120]!r}" for line in read.bad_lines[:5]]
    if read.empty:
        result.unknown.append("no output (LNet configured with no network?)")
    elif exit_code and not read.lnet_down and not result.unknown:
        result.unknown.append(f"exit status {exit_code}")
    return result
