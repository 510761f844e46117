"""The BGP health gate of a switch push: which configured neighbours FRR reports Established.

Input is FRR's ``show bgp [vrf <name>] summary json`` (on SONiC ``vtysh -c '...'``; the host's ``vtysh`` runs
the one in the ``bgp`` container), read by :func:`hwaac.telemetry.parsers.frr_bgp.parse_bgp_summary` (shapes and
versions: docs/telemetry/frr.md). A neighbour active in several address families is one session; its state is
the worst family's, with FRR's reason while down (``"Idle (Admin)"`` for ``neighbor X shutdown``, ``"Idle
(PfxCt)"`` after max-prefix). With no neighbour at all FRR prints ``{}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hwaac.telemetry.parsers.frr_bgp import parse_bgp_summary as read_bgp_summary

ESTABLISHED = "Established"


@dataclass(frozen=True, slots=True)
class BgpSummary:
    """The neighbours of one ``show bgp summary json``.

    Attributes:
        router_id: FRR's router id ("" when no family was shown).
        local_as: the local AS (0 when no family was shown).
        peers: neighbour -> its FSM state over all address families, with FRR's reason while down.
    """

    router_id: str = ""
    local_as: int = 0
    peers: dict[str, str] = field(default_factory=dict)

    def established(self) -> list[str]:
        """Addresses whose session is Established, sorted."""
        return sorted(a for a, s in self.peers.items() if s == ESTABLISHED)


def parse_bgp_summary(text: str | Mapping[str, Any]) -> BgpSummary:
    """Parse ``show bgp summary json`` (text or already-decoded JSON); an empty output has no neighbour.

    Raises:
        ValueError: the text is not FRR's JSON of the command (e.g. vtysh's "% Unknown command").
    """
    read = read_bgp_summary("{}" if isinstance(text, str) and not text.strip() else text)
    if not read.parsed:
        raise ValueError(f"not FRR's 'show bgp summary json' output: {read.unknown[0]}")
    peers = {p.name: p.label for p in read.peers.values()}  # one VRF asked: names do not repeat
    return BgpSummary(router_id=read.router_id, local_as=read.local_as or 0, peers=peers)


@dataclass(frozen=True, slots=True)
class GateVerdict:
    """Whether the expected neighbours are up.

    Attributes:
        expected: the neighbours that should be Established (sorted).
        established: the expected ones that are (sorted).
        down: expected neighbour -> its state ("missing" when FRR does not know it), sorted by address.
        passed: enough of ``expected`` is Established (see :func:`bgp_gate`).
    """

    expected: list[str]
    established: list[str]
    down: dict[str, str]
    passed: bool

    def message(self) -> str:
        """One line for the operator."""
        head = f"{len(self.established)}/{len(self.expected)} BGP sessions Established"
        if not self.down:
            return head
        shown = ", ".join(f"{a} {s}" for a, s in list(self.down.items())[:8])
        more = f" and {len(self.down) - 8} more" if len(self.down) > 8 else ""
        return f"{head}; not Established: {shown}{more}"


def bgp_gate(summary: BgpSummary, expected: Iterable[str] | None = None, *, min_up: float = 1.0) -> GateVerdict:
    """Judge a summary against the neighbours that should be up.

    Args:
        summary: from :func:`parse_bgp_summary`.
        expected: neighbour addresses that should be Established (default: every neighbour FRR reports).
        min_up: share of ``expected`` that must be Established, 0..1 (1.0: all of them). A first push of a
            fabric brings a leaf up before its spines are configured; a share below 1 lets such a batch pass.

    Returns:
        The verdict; it passes with no expected neighbours at all.

    Raises:
        ValueError: ``min_up`` outside 0..1.
    """
    if not 0.0 <= min_up <= 1.0:
        raise ValueError(f"min_up must be within 0..1, got {min_up}")
    want = sorted(set(summary.peers if expected is None else expected), key=_address_key)
    up = [a for a in want if summary.peers.get(a) == ESTABLISHED]
    down = {a: summary.peers.get(a, "missing") for a in want if summary.peers.get(a) != ESTABLISHED}
    passed = not want or len(up) >= min_up * len(want) - 1e-9
    return GateVerdict(expected=want, established=up, down=down, passed=passed)


def _address_key(address: str) -> tuple[int, tuple[int, ...], str]:
    """Sort IPv4 addresses numerically (10.1.0.10 after 10.1.0.2); anything else by text after them."""
    parts = address.split(".")
    if len(parts) == 4 and all(p.isdigit() for p in parts):
        return (0, tuple(int(p) for p in parts), "")
    return (1, (), address)
