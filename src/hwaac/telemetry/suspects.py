"""The shapes of localisation (:class:`Suspect`, :class:`Component`, :class:`Evidence`) and :class:`Observed`, the
typed input every rule of :mod:`hwaac.telemetry.localise` reads: the correlation, the link SLIs, the SLOs, the
BGP intervals, and per-end helpers (receive errors above the SLO, which GPU nodes sit behind a link or switch).

A rule first screens the ends with numpy over the correlation's columns (:meth:`Observed.screened`, the receive
error screen :meth:`Observed.error_ends`), then judges the few it picked one by one: docs/network-health.md
"Scale"."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property
from typing import Literal, get_args

import numpy as np

from hwaac.health.parsers.slurm_squeue import Job
from hwaac.plan.model import Link, ip_str
from hwaac.telemetry.framed import RatedFrame
from hwaac.telemetry.rates import Interval
from hwaac.telemetry.sli import FEC_UNCORR, LOSS, PRE_FEC_BER, LinkSLI
from hwaac.telemetry.slo import SloSet
from hwaac.telemetry.topology import Correlation, LinkIndex


class Severity(IntEnum):
    """Ordered so that ``max()`` is the worst: INFO (worth knowing, not a fault) < WARN < FAULT."""

    INFO = 1
    WARN = 2
    FAULT = 3

    def __str__(self) -> str:
        return self.name.lower()


INFO, WARN, FAULT = Severity.INFO, Severity.WARN, Severity.FAULT
SuspectKind = Literal["cable", "optic", "port", "nic", "host", "switch", "link", "rail"]
KINDS: tuple[str, ...] = get_args(SuspectKind)
# every rule that names suspects: hwaac.telemetry.localise, localise_flow and hwaac.telemetry.tomography (RULE_*)
SUSPECT_RULES = (
    "errors_both_ends",
    "errors_one_end",
    "flapping",
    "spine_path_loss",
    "links_down",
    "pfc_storm",
    "congestion",
    "switch_degraded",
    "probe_path_loss",
    "probe_unreachable",
)
# rules whose suspects are degraded ports (the switch rule counts them); PFC victims and congestion are not
DEGRADING = frozenset(
    {"errors_both_ends", "errors_one_end", "flapping", "spine_path_loss", "links_down", "probe_path_loss"}
)
_RX_ERRORS = (("rx_err", "frames/s"), ("rx_crc", "frames/s"), ("rx_symbol_err", "symbols/s"))


@dataclass(frozen=True, slots=True)
class Component:
    """A thing to look at: ``kind`` (one of :data:`KINDS`), its name (``leaf-p0-su01-r0 Ethernet0``, a cable id, a
    switch), the device and port where it has them, and its role in the suspect (``far-end transmitter``...)."""

    kind: str
    name: str
    device: str = ""
    port: str = ""
    role: str = ""


@dataclass(frozen=True, slots=True)
class Evidence:
    """One measured value behind a suspect.

    Attributes:
        what: the counter, gauge or SLI (``rx_err / (rx_ok + rx_err)``, ``pfc3_rx_duration_us``...).
        where: the device and port, cable or scope it was measured at.
        value / unit: the measurement.
        slo: the level it is judged against (same unit), None when there is none.
        severity: what this value alone is worth.
        detail: the numbers it came from, in words.
    """

    what: str
    where: str
    value: float
    unit: str
    slo: float | None
    severity: Severity
    detail: str = ""

    @property
    def multiple(self) -> float:
        """``value / slo`` (how far over the SLO), inf for a zero SLO, 1 when there is none."""
        if self.slo is None:
            return 1.0
        return self.value / self.slo if self.slo > 0 else math.inf


@dataclass(slots=True)
class Suspect:
    """A ranked suspect.

    Attributes:
        rule: the rule that named it.
        severity: the worst of its evidence as the rule judged it.
        components: what to look at, most likely first; ``kind`` is the first one's.
        evidence: the values behind it.
        reasoning: why, in words.
        strength: ranks suspects of one severity: (ends or ports that saw it, the worst multiple of the SLO).
        links / switches: plan link indices and switch names it concerns (they decide the nodes behind it).
        nodes / jobs: the GPU nodes whose rail traffic crosses it, and the Slurm jobs on them.
        replaced: per-port suspects it stands for (the switch rule).
        also: other rules that named the same thing and were folded into it.
    """

    rule: str
    severity: Severity
    components: tuple[Component, ...]
    evidence: tuple[Evidence, ...]
    reasoning: str
    strength: tuple[float, float]
    links: tuple[int, ...] = ()
    switches: tuple[str, ...] = ()
    nodes: tuple[str, ...] = ()
    jobs: tuple[Job, ...] = ()
    replaced: tuple[Suspect, ...] = ()
    also: tuple[str, ...] = ()

    @classmethod
    def worst_of(
        cls,
        rule: str,
        components: tuple[Component, ...],
        evidence: tuple[Evidence, ...],
        reasoning: str,
        seen: float,
        *,
        links: tuple[int, ...] = (),
        switches: tuple[str, ...] = (),
    ) -> Suspect:
        """A suspect judged by its ``evidence`` alone: the worst severity, and strength (``seen``, the worst
        multiple of the SLO)."""
        severity = max(e.severity for e in evidence)
        strength = (seen, max(e.multiple for e in evidence))
        return cls(rule, severity, components, evidence, reasoning, strength, links=links, switches=switches)

    @property
    def kind(self) -> str:
        return self.components[0].kind if self.components else ""

    def ports(self, index: LinkIndex) -> list[tuple[str, str]]:
        """The (device, port) ends of its links."""
        return [index.end_name(2 * i + e) for i in self.links for e in (0, 1)]


def link_components(link: Link) -> tuple[Component, ...]:
    """A link as components: the link (named by its cable id), then its two ends."""
    a_kind = "nic" if link.kind == "host" else "port"
    return (
        Component("link", link.cable_id, role="the link"),
        Component(a_kind, f"{link.a_device} {link.a_port}", link.a_device, link.a_port, "end a"),
        Component("port", f"{link.b_device} {link.b_port}", link.b_device, link.b_port, "end b"),
    )


def truthy(column: np.ndarray) -> np.ndarray:
    """Per end, whether a value of an :class:`~hwaac.telemetry.end_table.EndTable` column is true as the end read back
    gives it (``if rate:``): neither 0 nor NaN (None)."""
    return (column != 0) & ~np.isnan(column)


def rank(suspects: Sequence[Suspect]) -> list[Suspect]:
    """Worst severity first, then the stronger evidence (more ends, then a larger multiple of the SLO), then name
    (so that equal suspects keep a stable order)."""
    return sorted(
        suspects,
        key=lambda s: (-s.severity, -s.strength[0], -s.strength[1], s.components[0].name if s.components else ""),
    )


@dataclass
class Observed:
    """Everything a rule reads.

    Attributes:
        corr: the samples attached to the plan's link ends.
        slis: the link SLIs, in plan order (``sli.link_slis(corr)``).
        slos: the SLOs and localisation levels.
        bgp: per leaf, the interval of its BGP summaries (session drops), when read.
        screen: whether the rules first pick, with numpy over the correlation's columns, the ends that can give
            them evidence, and judge those only; False judges every end (the plain loops, which the screens must
            match exactly: tests/unit/telemetry/test_localise_screens.py).
    """

    corr: Correlation
    slis: Sequence[LinkSLI]
    slos: SloSet
    bgp: Mapping[str, Interval | RatedFrame] = field(default_factory=dict)
    screen: bool = True
    _errors: dict[int, tuple[Evidence, ...]] = field(default_factory=dict, repr=False)

    @property
    def index(self) -> LinkIndex:
        return self.corr.index

    @cached_property
    def gpu_nodes(self) -> frozenset[str]:
        """The plan's GPU node names."""
        return frozenset(n.name for n in self.index.plan.nodes if n.kind == "gpu")

    @cached_property
    def leaf_ids(self) -> tuple[list[str], np.ndarray]:
        """(the leaves, in the order of their first link in the plan; per link, the position of its leaf in that
        list, -1 for a link of no leaf), from ``index.leaf_of``."""
        of = self.index.leaf_of
        names = [leaf for leaf in dict.fromkeys(of) if leaf is not None]
        pos: dict[str | None, int] = {leaf: k for k, leaf in enumerate(names)}
        pos[None] = -1
        return names, np.fromiter(map(pos.__getitem__, of), dtype=np.int64, count=len(of))

    def is_host(self, device: str) -> bool:
        """Whether ``device`` is a node of the plan (GPU node or appliance), not a switch."""
        return device not in self.index.plan.switch_by_name

    def limit(self, sli: str) -> float:
        """The SLO bound of ``sli`` (its ``max``, or ``min`` for availability and path diversity)."""
        o = self.slos.slos[sli]
        bound = o.max if o.max is not None else o.min
        assert bound is not None  # Objective's validator: exactly one of min and max
        return bound

    def sampled(self, code: int) -> bool:
        return bool(self.corr.ends.layout[code] >= 0)

    def screened(self, mask: Callable[[], np.ndarray]) -> list[int]:
        """The end codes, in order, where ``mask()`` (a rule's screen: one bool per end) holds; every end code when
        not screening."""
        if not self.screen:
            return list(range(len(self.corr.ends)))
        return np.flatnonzero(mask()).tolist()

    @cached_property
    def _error_mask(self) -> np.ndarray:
        """Per end, whether it can have receive errors above the SLO (:meth:`errors`): rx_err, rx_crc or
        rx_symbol_err above 0, uncorrectable FEC codewords above their SLO, the pre-FEC BER above its warn level or
        bound; every sampled end when an SLO it needs is not set (:meth:`errors` judges them as before)."""
        table, slos = self.corr.ends, self.slos.slos
        if not self.screen:
            return np.ones(len(table), dtype=bool)
        if LOSS not in slos or FEC_UNCORR not in slos:
            return table.sampled
        mask = np.zeros(len(table), dtype=bool)
        for name, _unit in _RX_ERRORS:
            col = table.rates.get(name)
            if col is not None:
                mask |= col > 0
        col = table.rates.get("fec_uncorrectable")
        if col is not None:
            mask |= col > self.limit(FEC_UNCORR)
        obj, col = slos.get(PRE_FEC_BER), table.gauges.get("pre_fec_ber")
        if obj is not None and obj.max is not None and col is not None:
            mask |= col > (obj.max if obj.warn is None else min(obj.max, obj.warn))
        return mask

    def error_ends(self) -> np.ndarray:
        """The codes, in order, of the ends that can have receive errors above the SLO (:meth:`errors` is empty for
        every other end); every end code when not screening."""
        return np.flatnonzero(self._error_mask)

    def errors(self, code: int) -> tuple[Evidence, ...]:
        """Receive errors above the SLO at end ``code``: rx_err, rx_crc or rx_symbol_err over the frames received
        above the loss SLO, uncorrectable FEC codewords above theirs, the pre-FEC BER above its warn level (warn) or
        its bound (fault). Empty when the end is clean or not sampled."""
        cached = self._errors.get(code)
        if cached is not None:
            return cached
        if not self._error_mask[code]:
            return ()
        out: list[Evidence] = []
        pr = self.corr.ends[code]
        if pr is not None:
            device, port = self.index.end_name(code)
            where = f"{device} {port}"
            r = pr.rates
            ok = r.get("rx_ok") or 0.0
            loss = self.limit(LOSS)
            for name, unit in _RX_ERRORS:
                x = r.get(name)
                if x and x > 0:
                    ratio = x / (ok + x)
                    if ratio > loss:
                        out.append(
                            Evidence(
                                f"{name} / (rx_ok + {name})",
                                where,
                                ratio,
                                "ratio",
                                loss,
                                FAULT,
                                f"{x:.3g} {unit} with {ok:.3g} frames/s received",
                            )
                        )
            u = r.get("fec_uncorrectable")
            fec = self.limit(FEC_UNCORR)
            if u is not None and u > fec:
                out.append(Evidence("fec_uncorrectable", where, u, "codewords/s", fec, FAULT))
            ber = pr.gauges.get("pre_fec_ber")
            obj = self.slos.slos.get(PRE_FEC_BER)
            if ber is not None and obj is not None and obj.max is not None:
                if ber > obj.max:
                    out.append(Evidence(PRE_FEC_BER, where, ber, "ratio", obj.max, FAULT))
                elif obj.warn is not None and ber > obj.warn:
                    out.append(Evidence(PRE_FEC_BER, where, ber, "ratio", obj.warn, WARN, "above the warn level"))
        result = tuple(out)
        self._errors[code] = result
        return result

    def peer_links(self, leaf: str) -> dict[str, int]:
        """BGP peer name of ``leaf`` (the far end's address, or the leaf's port for an unnumbered session) -> link."""
        out: dict[str, int] = {}
        for port, code in self.index.ports.get(leaf, {}).items():
            i = code >> 1
            link = self.index.links[i]
            out[ip_str(link.b_ip if code & 1 == 0 else link.a_ip)] = i
            out[port] = i
        return out

    def _tree(self) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """(device -> GPU nodes cabled to it, switch -> the lower-tier switches cabled to it)."""
        return self.index.cabled_below

    def hosts_under(self, switch: str) -> set[str]:
        """The GPU nodes whose rail traffic can cross ``switch``: cabled to it, or to a switch below it."""
        hosts, below = self._tree()
        out: set[str] = set(hosts.get(switch, ()))
        todo, seen = list(below.get(switch, ())), {switch}
        while todo:
            sw = todo.pop()
            if sw in seen:
                continue
            seen.add(sw)
            out |= hosts.get(sw, set())
            todo.extend(below.get(sw, ()))
        return out

    def nodes_behind(self, s: Suspect) -> tuple[str, ...]:
        """The GPU nodes behind a suspect: a host link's node; the nodes under a switch link's lower end (a
        leaf-spine link: the leaf's hosts); the nodes under a switch."""
        gpu = self.gpu_nodes
        out: set[str] = set()
        for i in s.links:
            link = self.index.links[i]
            if link.kind == "host":
                if link.a_device in gpu:
                    out.add(link.a_device)
            else:
                out |= self.hosts_under(link.a_device)
        for sw in s.switches:
            out |= {sw} if sw in gpu else self.hosts_under(sw)
        return tuple(sorted(out))


__all__ = [
    "DEGRADING",
    "FAULT",
    "INFO",
    "KINDS",
    "SUSPECT_RULES",
    "WARN",
    "Component",
    "Evidence",
    "Observed",
    "Severity",
    "Suspect",
    "SuspectKind",
    "link_components",
    "rank",
    "truthy",
]
