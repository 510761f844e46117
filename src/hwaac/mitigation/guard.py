"""Guard rails of network mitigation: whether draining a link or a switch may go ahead, decided on the plan and
what is already out of service. A drain that would leave a leaf with fewer than ``min_leaf_uplinks`` uplinks or a
plane with fewer than ``min_plane_spines`` spines is refused; so is one past ``max_actions`` on one scope, or past
``breaker_actions`` in the fabric, within ``window`` (the breaker then trips and refuses every drain until a person
resets it). Every decision, allowed or refused, says which rule decided and why. Why: ``docs/mitigation.md``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from hwaac.plan.model import Link, Plan

DRAIN_LINK, DRAIN_SWITCH, UNDRAIN_LINK, UNDRAIN_SWITCH = "drain_link", "drain_switch", "undrain_link", "undrain_switch"
ACTIONS = (DRAIN_LINK, DRAIN_SWITCH, UNDRAIN_LINK, UNDRAIN_SWITCH)


@dataclass(frozen=True)
class GuardRails:
    """The limits every drain is checked against.

    Attributes:
        min_leaf_uplinks: uplinks (leaf-spine links) a leaf keeps in service.
        min_plane_spines: spines a plane keeps in service.
        min_spine_uplinks: uplinks (spine-super-spine links) a spine of a three-tier fabric keeps in service.
        max_actions: drains of one scope (a leaf's uplinks, or one spine) within ``window``.
        breaker_actions: drains in the whole fabric within ``window``; one more trips the breaker.
        window: the sliding window of the two counts.
    """

    min_leaf_uplinks: int = 2
    min_plane_spines: int = 2
    max_actions: int = 2
    breaker_actions: int = 6
    window: timedelta = timedelta(minutes=10)
    min_spine_uplinks: int = 2

    def __post_init__(self) -> None:
        for name in ("min_leaf_uplinks", "min_plane_spines", "max_actions", "breaker_actions", "min_spine_uplinks"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"{name}: {value!r} must be a whole number of at least 1")
        if self.window.total_seconds() <= 0:
            raise ValueError(f"window: {self.window} must be positive")


@dataclass
class OutOfService:
    """What mitigation has taken out of service, and when it acted.

    Attributes:
        links: the drained links, by cable id.
        switches: the drained switches, by name.
        acted: (when, scope) of each drain made, oldest first.
        tripped_at: when the breaker tripped (None: closed).
    """

    links: set[str] = field(default_factory=set)
    switches: set[str] = field(default_factory=set)
    acted: list[tuple[datetime, str]] = field(default_factory=list)
    tripped_at: datetime | None = None


@dataclass(frozen=True)
class Decision:
    """One decision: ``action`` on ``target`` (a cable id or a switch), ``allowed`` or not, the ``rule`` that
    decided (``ok``, ``already``, ``unknown_target``, ``only_path``, ``last_uplinks``, ``last_spines``,
    ``rate_limit``, ``breaker``), why, and the counts it was decided on."""

    action: str
    target: str
    allowed: bool
    rule: str
    reason: str
    scope: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """As one line of the decision log."""
        return {
            "action": self.action,
            "target": self.target,
            "allowed": self.allowed,
            "rule": self.rule,
            "reason": self.reason,
            "scope": self.scope,
            "inputs": dict(self.inputs),
        }


class Fabric:
    """The plan's links and switches as the guard rails count them."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.by_cable: dict[str, Link] = {link.cable_id: link for link in plan.links}
        self.role = {s.name: s.role for s in plan.switches}
        self.plane = {s.name: s.plane for s in plan.switches}
        self.uplinks: dict[str, list[Link]] = {}  # leaf (spine) -> its leaf-spine (spine-super-spine) links
        self.downlinks: dict[str, list[Link]] = {}  # spine (super-spine) -> its leaf-spine (...) links
        for link in plan.links:
            if link.kind in ("leaf_spine", "spine_super_spine"):
                self.uplinks.setdefault(link.a_device, []).append(link)
                self.downlinks.setdefault(link.b_device, []).append(link)
        self.spines: dict[int, list[str]] = {}  # plane -> its spines
        for s in plan.switches:
            if s.role == "spine":
                self.spines.setdefault(s.plane, []).append(s.name)

    def in_service(
        self, switch: str, out: OutOfService, *, links: Collection[str] = (), switches: Collection[str] = ()
    ) -> int:
        """Uplinks of ``switch`` (a leaf, or a spine of a three-tier fabric) in service: neither drained nor to a
        drained switch (nor in ``links`` or to one of ``switches``, the drain being decided)."""
        return sum(
            1
            for link in self.uplinks.get(switch, ())
            if link.cable_id not in out.links
            and link.cable_id not in links
            and link.b_device not in out.switches
            and link.b_device not in switches
        )


def links_of(plan: Plan, action: str, target: str) -> list[Link]:
    """The switch-to-switch links a drain or undrain acts on: a link's own, or every one of a switch."""
    if action in (DRAIN_LINK, UNDRAIN_LINK):
        return [link for link in plan.links if link.cable_id == target]
    return [link for link in plan.links if link.kind != "host" and target in (link.a_device, link.b_device)]


def decide(fabric: Fabric, rails: GuardRails, out: OutOfService, action: str, target: str, now: datetime) -> Decision:
    """Whether ``action`` on ``target`` may go ahead now. Undrains are always allowed (taking a link back is never
    the harm these rails prevent); a drain of what is already out is allowed and changes nothing."""
    if action not in ACTIONS:
        raise ValueError(f"action: {action!r} is not one of {', '.join(ACTIONS)}")
    if action in (UNDRAIN_LINK, UNDRAIN_SWITCH):
        known = target in fabric.by_cable if action == UNDRAIN_LINK else target in fabric.role
        if not known:
            return Decision(action, target, False, "unknown_target", f"{target} is not in the plan")
        drained = target in (out.links if action == UNDRAIN_LINK else out.switches)
        return Decision(
            action,
            target,
            True,
            "ok" if drained else "already",
            "back in service" if drained else f"{target} is in service",
        )
    if action == DRAIN_LINK:
        link = fabric.by_cable.get(target)
        if link is None:
            return Decision(action, target, False, "unknown_target", f"cable {target} is not in the plan")
        if target in out.links:
            return Decision(action, target, True, "already", f"{target} is drained")
        if link.kind == "host":
            return Decision(
                action,
                target,
                False,
                "only_path",
                f"{target} is {link.a_device}'s only path on its "
                "rail: quarantine the node instead of draining its link",
            )
        return _drain(fabric, rails, out, action, target, link.a_device, [link.a_device], {target}, set(), now)
    role = fabric.role.get(target)
    if role is None:
        return Decision(action, target, False, "unknown_target", f"switch {target} is not in the plan")
    if target in out.switches:
        return Decision(action, target, True, "already", f"{target} is drained")
    if role == "leaf":
        return Decision(
            action,
            target,
            False,
            "only_path",
            f"{target} is its GPU nodes' only path on their rail: quarantine its nodes instead of draining it",
        )
    if role == "spine":
        plane = fabric.plane[target]
        left = sum(1 for s in fabric.spines.get(plane, ()) if s not in out.switches and s != target)
        if left < rails.min_plane_spines:
            return Decision(
                action,
                target,
                False,
                "last_spines",
                f"plane {plane} would keep {left} spine(s) in service, fewer than "
                f"min_plane_spines {rails.min_plane_spines}",
                target,
                {"plane": plane, "spines_left": left, "min_plane_spines": rails.min_plane_spines},
            )
    below = sorted({link.a_device for link in fabric.downlinks.get(target, ())})
    return _drain(fabric, rails, out, action, target, target, below, set(), {target}, now)


def _drain(
    fabric: Fabric,
    rails: GuardRails,
    out: OutOfService,
    action: str,
    target: str,
    scope: str,
    below: list[str],
    links: set[str],
    switches: set[str],
    now: datetime,
) -> Decision:
    """A drain past the target's own checks: the breaker, the uplinks of the switches ``below`` (leaves, or the
    spines under a super-spine), the rate limits."""
    since = now - rails.window
    recent = [s for t, s in out.acted if t >= since]
    if out.tripped_at is not None:
        return Decision(
            action,
            target,
            False,
            "breaker",
            f"the breaker tripped at {out.tripped_at.isoformat()}: no drain until a person resets it",
            scope,
            {"tripped_at": out.tripped_at.isoformat()},
        )
    for switch in below:
        left = fabric.in_service(switch, out, links=links, switches=switches)
        name, least = (
            ("min_leaf_uplinks", rails.min_leaf_uplinks)
            if fabric.role.get(switch) == "leaf"
            else ("min_spine_uplinks", rails.min_spine_uplinks)
        )
        if left < least:
            return Decision(
                action,
                target,
                False,
                "last_uplinks",
                f"{switch} would keep {left} uplink(s) in service, fewer than {name} {least}",
                scope,
                {"switch": switch, "uplinks_left": left, name: least},
            )
    if len(recent) + 1 > rails.breaker_actions:
        out.tripped_at = now
        return Decision(
            action,
            target,
            False,
            "breaker",
            f"{len(recent)} drain(s) in the last {rails.window.total_seconds():g} s, one more is past "
            f"breaker_actions {rails.breaker_actions}: the breaker trips (a storm of faults has a "
            "shared cause that drains would not fix)",
            scope,
            {"recent": len(recent), "breaker_actions": rails.breaker_actions},
        )
    mine = recent.count(scope)
    if mine + 1 > rails.max_actions:
        return Decision(
            action,
            target,
            False,
            "rate_limit",
            f"{mine} drain(s) of {scope} in the last {rails.window.total_seconds():g} s, at "
            f"max_actions {rails.max_actions}",
            scope,
            {"recent_in_scope": mine, "max_actions": rails.max_actions},
        )
    return Decision(
        action,
        target,
        True,
        "ok",
        "within the guard rails",
        scope,
        {"switches_checked": len(below), "recent": len(recent), "recent_in_scope": mine},
    )


def record(out: OutOfService, decision: Decision, now: datetime) -> None:
    """What an allowed decision changes once carried out: the target in or out of service, a drain counted."""
    if not decision.allowed or decision.rule == "already":
        return
    if decision.action == DRAIN_LINK:
        out.links.add(decision.target)
    elif decision.action == DRAIN_SWITCH:
        out.switches.add(decision.target)
    elif decision.action == UNDRAIN_LINK:
        out.links.discard(decision.target)
    else:
        out.switches.discard(decision.target)
    if decision.action in (DRAIN_LINK, DRAIN_SWITCH):
        out.acted.append((now, decision.scope))


__all__ = [
    "ACTIONS",
    "DRAIN_LINK",
    "DRAIN_SWITCH",
    "UNDRAIN_LINK",
    "UNDRAIN_SWITCH",
    "Decision",
    "Fabric",
    "GuardRails",
    "OutOfService",
    "decide",
    "links_of",
    "record",
]
