"""The mitigation policy: which findings of network health (a suspect's rule, severity, kind and link kind) lead to
which action, after how many sweeps, how long a drained target stays out and when it comes back, and the guard
rails every drain passes. The shipped default is ``hwaac/mitigation/data/policy.yaml``; :func:`load_policy` reads
it or a user's file and raises :class:`PolicyError` naming file, line, field, value and what would be valid.
Why: ``docs/mitigation.md`` "Policy".
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from hwaac.errors import IntentError, IntentIssue
from hwaac.mitigation.guard import DRAIN_LINK, DRAIN_SWITCH, GuardRails
from hwaac.model.issues import dotted
from hwaac.model.loader import require_mapping
from hwaac.model.shipped import ShippedFile, load_yaml_model
from hwaac.model.yamlfile import LineIndex
from hwaac.plan.model import LinkKind
from hwaac.telemetry.suspects import KINDS, SUSPECT_RULES, Severity, SuspectKind

QUARANTINE_NODE, NOTIFY = "quarantine_node", "notify"
MANUAL = "manual"  # the policy rule of a person's drain or undrain (hwaac remediate --drain-switch ...)
Action = Literal["drain_link", "drain_switch", "quarantine_node", "notify"]
POLICY_ACTIONS: tuple[str, ...] = get_args(Action)
Kind = SuspectKind
SeverityName = Literal["info", "warn", "fault"]
LINK_KINDS: tuple[str, ...] = get_args(LinkKind)
# the finding kinds each action can act on (notify: any); a host link's fault, optic included, quarantines its node
ACTION_KINDS: dict[str, tuple[str, ...]] = {
    DRAIN_LINK: ("cable", "optic", "port", "link"),
    DRAIN_SWITCH: ("switch",),
    QUARANTINE_NODE: ("nic", "host", "port", "cable", "optic", "link"),
}
_LEVEL = {str(s): s for s in Severity}
_RAILS = GuardRails()


def _some[T](items: tuple[T, ...]) -> tuple[T, ...]:
    # not Field(min_length=1): pydantic adds a "too short" error to a tuple whose item failed
    if not items:
        raise ValueError("an empty list: give at least one item")
    return items


type Some[T] = Annotated[tuple[T, ...], AfterValidator(_some)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Rails(_Strict):
    """``guard_rails``: :class:`hwaac.mitigation.guard.GuardRails` with the window in seconds."""

    min_leaf_uplinks: int = Field(default=_RAILS.min_leaf_uplinks, ge=1)
    min_plane_spines: int = Field(default=_RAILS.min_plane_spines, ge=1)
    max_actions: int = Field(default=_RAILS.max_actions, ge=1)
    breaker_actions: int = Field(default=_RAILS.breaker_actions, ge=1)
    window_s: float = Field(default=_RAILS.window.total_seconds(), gt=0)
    min_spine_uplinks: int = Field(default=_RAILS.min_spine_uplinks, ge=1)


class Match(_Strict):
    """Which findings a rule takes; an absent filter takes any value, ``severity`` is the least one taken."""

    rules: Some[str] | None = Field(default=None, description="Suspect rules (SUSPECT_RULES).")
    kinds: Some[Kind] | None = Field(default=None, description="The suspect's kind (its first component).")
    severity: SeverityName = "fault"
    link_kinds: Some[LinkKind] | None = Field(default=None, description="The plan link's kind.")

    def matches(self, rule: str, severity: str | Severity, kind: str, link_kind: str | None = None) -> bool:
        """Whether a finding of suspect rule ``rule``, ``severity`` (``info``, ``warn``, ``fault`` or a
        :class:`Severity`), ``kind`` and ``link_kind`` (None: the finding is on no plan link) is taken."""
        level = _LEVEL.get(str(severity))
        if level is None:
            raise ValueError(f"severity: {severity!r} is not one of {', '.join(_LEVEL)}")
        return (
            (self.rules is None or rule in self.rules)
            and (self.kinds is None or kind in self.kinds)
            and level >= _LEVEL[self.severity]
            and (self.link_kinds is None or link_kind in self.link_kinds)
        )


class PolicyRule(_Strict):
    """One rule: the findings it takes and what is done about them."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    match: Match = Match()
    action: Action
    persistence: int = Field(default=2, ge=1, description="Consecutive sweeps a finding is seen before acting.")
    hold_down_s: float = Field(default=600, ge=0, description="A drained target stays out at least this long.")
    recheck_sweeps: int = Field(default=3, ge=1, description="Clean sweeps in a row before an undrain.")
    auto_undrain: bool = True


class Recheck(_Strict):
    """``recheck``: before an undrain puts routes back on a link, pings cross it (its point-to-point subnet, from
    one end to the other) while its session is open and every route still marked; more loss than
    ``max_loss_pct`` drains it again and restarts its hold-down."""

    pings: int = Field(default=200, ge=1, le=10_000, description="Echo requests across each link.")
    interval_s: float = Field(
        default=0.01, ge=0.002, le=1, description="Seconds between them (ping -i; iputils' floor is 0.002)."
    )
    max_loss_pct: float = Field(default=0, ge=0, lt=100, description="The most loss a link may show and come back.")

    def failed(self, sent: int, received: int) -> bool:
        """Whether ``received`` replies of ``sent`` requests are too few (none sent counts as failed)."""
        return sent <= 0 or 100.0 * (sent - received) / sent > self.max_loss_pct


class Policy(_Strict):
    """A mitigation policy (one YAML file); rules are tried in order, the first that takes a finding decides."""

    guard_rails: Rails = Rails()
    graceful_s: float = Field(
        default=5, ge=0, description="Seconds between BGP graceful shutdown and the session shut."
    )
    recheck: Recheck = Recheck()
    rules: Some[PolicyRule]

    def rails(self) -> GuardRails:
        """The guard rails :func:`hwaac.mitigation.guard.decide` checks drains against."""
        g = self.guard_rails
        return GuardRails(
            g.min_leaf_uplinks,
            g.min_plane_spines,
            g.max_actions,
            g.breaker_actions,
            timedelta(seconds=g.window_s),
            g.min_spine_uplinks,
        )

    def rule_for(
        self, rule: str, severity: str | Severity, kind: str, link_kind: str | None = None
    ) -> PolicyRule | None:
        """The first rule that takes the finding (:meth:`Match.matches`), None when no rule does."""
        return next((r for r in self.rules if r.match.matches(rule, severity, kind, link_kind)), None)


class PolicyError(IntentError):
    """A policy file is invalid; ``issues`` name file, line, field, value and what would be valid."""


def _a_mapping(root: object, file: str) -> None:
    """Refuse a policy that is not a mapping before pydantic does, naming the keys it may have."""
    require_mapping(root, file, "policy", ", ".join(Policy.model_fields), PolicyError)


def _checks(policy: Policy, index: LineIndex, file: str) -> list[IntentIssue]:
    """What the schema cannot say: unique names, known suspect rules, and kinds an action can act on."""
    issues = []

    def issue(loc: list[str | int], message: str, value: object, valid: str) -> None:
        issues.append(
            IntentIssue(path=dotted(loc), message=message, value=value, valid=valid, file=file, line=index.line_of(loc))
        )

    first: dict[str, int] = {}
    for i, r in enumerate(policy.rules):
        at: list[str | int] = ["rules", i]
        if r.name in first:
            issue(
                [*at, "name"],
                f"duplicate rule name (first at line {first[r.name]})",
                r.name,
                "a name no other rule has",
            )
        first.setdefault(r.name, index.line_of([*at, "name"]))
        if r.name == MANUAL:
            issue(
                [*at, "name"],
                "reserved: the decision log names a person's drains and undrains so",
                r.name,
                "any other name",
            )
        m = r.match
        for j, name in enumerate(m.rules or ()):
            if name not in SUSPECT_RULES:
                issue([*at, "match", "rules", j], "unknown suspect rule", name, ", ".join(sorted(SUSPECT_RULES)))
        able = ACTION_KINDS.get(r.action)
        if able is None:
            continue
        if m.kinds is None:
            issue(
                [*at, "match", "kinds"],
                f"{r.action} needs match.kinds: absent means any kind, and "
                f"{r.action} cannot act on {', '.join(k for k in KINDS if k not in able)}",
                None,
                ", ".join(able),
            )
        for j, kind in enumerate(m.kinds or ()):
            if kind not in able:
                issue([*at, "match", "kinds", j], f"{r.action} cannot act on a {kind}", kind, ", ".join(able))
        if r.action == DRAIN_LINK:
            fabric = ", ".join(k for k in LINK_KINDS if k != "host")
            if m.link_kinds is None:
                issue(
                    [*at, "match", "link_kinds"],
                    "drain_link needs match.link_kinds: absent means any link, host links included",
                    None,
                    f"{fabric} (host links: action quarantine_node)",
                )
            for j, lk in enumerate(m.link_kinds or ()):
                if lk == "host":
                    issue(
                        [*at, "match", "link_kinds", j],
                        "a host link is its node's only path on its rail: it is not drained",
                        lk,
                        f"action quarantine_node for host links; drain_link for {fabric}",
                    )
        elif r.action == QUARANTINE_NODE:
            for j, lk in enumerate(m.link_kinds or ()):
                if lk != "host":
                    issue(
                        [*at, "match", "link_kinds", j],
                        f"a {lk} link's fault is not its nodes' fault: they are not quarantined for it",
                        lk,
                        "host (fabric links: action drain_link)",
                    )
    return issues


def load_policy_text(text: str, file: str = "<string>") -> Policy:
    """Parse and validate policy YAML. Raises :class:`PolicyError`."""
    return load_yaml_model(text, file, Policy, PolicyError, _checks, before=_a_mapping)


_POLICY_FILE = ShippedFile("hwaac.mitigation", "policy.yaml", load_policy_text)
default_policy = _POLICY_FILE.default
"""The shipped default."""
load_policy = _POLICY_FILE.load
"""The policy of ``path``, or the shipped default when None. Raises :class:`PolicyError`."""


__all__ = [
    "ACTION_KINDS",
    "LINK_KINDS",
    "NOTIFY",
    "POLICY_ACTIONS",
    "QUARANTINE_NODE",
    "Match",
    "Policy",
    "PolicyError",
    "PolicyRule",
    "Rails",
    "Recheck",
    "default_policy",
    "load_policy",
    "load_policy_text",
]
