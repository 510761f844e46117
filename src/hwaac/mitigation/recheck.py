"""The re-check of a link before its undrain: pings across the link's point-to-point subnet, from one end to the
other, while its session is open and every route still marked graceful-shutdown (traffic still avoids it). While a
link is drained no probe crosses it, so clean sweeps alone say nothing of it; these pings do. What to send and how
much loss fails come from the policy's ``recheck``; ``playbooks/mitigate.yml`` runs them and keeps the raw results,
read here and parsed by :func:`hwaac.verify.facts.parse_ping`.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hwaac.mitigation.policy import Recheck
from hwaac.plan.model import Link
from hwaac.verify.facts import FactError, parse_ping
from hwaac.verify.raw import Raw


@dataclass(frozen=True, slots=True)
class Probe:
    """The pings of one link: from ``device``'s address ``src`` to the far end's ``dst``."""

    cable: str
    device: str
    src: str
    dst: str


@dataclass(frozen=True, slots=True)
class Verdict:
    """A link's re-check: ``ok`` or not, and what was seen (``sent``/``received``; ``detail`` says it in words)."""

    cable: str
    ok: bool
    sent: int
    received: int
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"cable": self.cable, "ok": self.ok, "sent": self.sent, "received": self.received, "detail": self.detail}


def probes(links: Iterable[Link]) -> list[Probe]:
    """One probe per link, from its a end."""
    return [
        Probe(
            link.cable_id, link.a_device, str(ipaddress.IPv4Address(link.a_ip)), str(ipaddress.IPv4Address(link.b_ip))
        )
        for link in links
    ]


def extra_vars(todo: Sequence[Probe], recheck: Recheck, folder: Path) -> dict[str, Any]:
    """What ``playbooks/mitigate.yml`` reads to run the re-check; each switch writes ``folder/<switch>.json``."""
    by: dict[str, list[dict[str, str]]] = {}
    for p in todo:
        by.setdefault(p.device, []).append({"cable": p.cable, "src": p.src, "dst": p.dst})
    return {
        "mitigate_recheck": by,
        "mitigate_recheck_hosts": ",".join(sorted(by)) or "none",
        "mitigate_recheck_pings": recheck.pings,
        "mitigate_recheck_interval": f"{recheck.interval_s:g}",
        "mitigate_recheck_dir": str(folder),
    }


def _results(folder: Path, device: str) -> list[Mapping[str, Any]]:
    path = folder / f"{device}.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [r for r in doc if isinstance(r, Mapping)] if isinstance(doc, list) else []


def judge(todo: Sequence[Probe], folder: Path, recheck: Recheck) -> dict[str, Verdict]:
    """Each probe's verdict, by cable, from the results the playbook kept in ``folder`` (a probe with no result
    fails: what was not seen is not clean)."""
    found: dict[str, Mapping[str, Any]] = {}
    for device in {p.device for p in todo}:
        for r in _results(folder, device):
            item = r.get("item")
            if isinstance(item, Mapping):
                found[str(item.get("cable"))] = r
    out = {}
    for p in todo:
        res = found.get(p.cable)
        if res is None:
            out[p.cable] = Verdict(p.cable, False, 0, 0, f"no ping result from {p.device}")
            continue
        cmd = res.get("cmd")
        argv = cmd if isinstance(cmd, list) else ["ping"]
        raw = Raw(
            tuple(str(a) for a in argv),
            rc=res.get("rc") if isinstance(res.get("rc"), int) else None,
            stdout=str(res.get("stdout", "")),
            stderr=str(res.get("stderr", "")),
            error=None if isinstance(res.get("rc"), int) else str(res.get("msg", "did not run")),
        )
        try:
            ping = parse_ping(raw)
        except FactError as exc:
            out[p.cable] = Verdict(p.cable, False, 0, 0, f"{p.device} ping {p.dst}: {exc}")
            continue
        if ping.error is not None:
            out[p.cable] = Verdict(p.cable, False, 0, 0, f"{p.device} ping {p.dst}: {ping.error}")
            continue
        sent, got = ping.transmitted, ping.received
        lost = 100.0 * (sent - got) / sent if sent else 100.0
        words = (
            f"{p.device} {p.src} -> {p.dst}: {got}/{sent} replies ({lost:.1f}% lost, at most "
            f"{recheck.max_loss_pct:g}% allowed)"
        )
        out[p.cable] = Verdict(p.cable, not recheck.failed(sent, got), sent, got, words)
    return out


__all__ = ["Probe", "Verdict", "extra_vars", "judge", "probes"]
