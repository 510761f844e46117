"""Derived dimensions of a fabric: how many of each switch, how ports split, how big each layer is.

All counts are per plane unless the name says otherwise. The rules follow the NVIDIA DGX SuperPOD reference
architectures (H100, B200, B300): one leaf per rail per SU, every leaf uplinked evenly to every spine of its
plane (or pod), and a spine count that divides the leaf uplinks, so that the published tables come out, e.g.
3 SUs of 32 nodes with 64-port leaves give 16 spines, not 12 (H100 RA, table 4).

Sizing uses ``su_capacity`` (not ``su_count``) so that growth up to the capacity never changes the number of
spines or super-spines, and therefore never moves an existing cable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from hwaac.errors import IntentIssue
from hwaac.model.intent import Intent, SwitchModel


class DesignError(Exception):
    def __init__(self, issues: list[IntentIssue]):
        self.issues = issues
        super().__init__("; ".join(str(i) for i in issues))


@dataclass(frozen=True, slots=True)
class Design:
    """Derived sizes (see module docstring). Ports are counts of switch ports; speeds in Gb/s."""

    tiers: int
    planes: int
    rails: int
    nodes_per_su: int
    su_count: int
    su_capacity: int
    leaf_model: SwitchModel
    spine_model: SwitchModel
    super_spine_model: SwitchModel | None
    leaf_downlinks: int
    leaf_uplinks: int
    spines_per_group: int  # per plane (2 tiers) or per pod and plane (3 tiers)
    links_per_leaf_spine: int  # parallel links between one leaf and one spine
    sus_per_pod: int  # 3 tiers; su_capacity for 2 tiers (one "pod")
    spine_downlinks: int
    spine_uplinks: int  # 0 for 2 tiers
    super_spines_per_group: int  # 3 tiers: super-spines that spine j of each pod connects to
    links_per_spine_super_spine: int

    @property
    def pods(self) -> int:
        return math.ceil(self.su_count / self.sus_per_pod)

    @property
    def pod_capacity(self) -> int:
        return math.ceil(self.su_capacity / self.sus_per_pod)

    @property
    def spines_per_plane(self) -> int:
        return self.spines_per_group * (self.pods if self.tiers == 3 else 1)

    @property
    def super_spines_per_plane(self) -> int:
        return self.spines_per_group * self.super_spines_per_group if self.tiers == 3 else 0

    @property
    def oversubscription(self) -> float:
        down = self.leaf_downlinks * self.leaf_model.port_speed_gbps
        up = self.leaf_uplinks * self.leaf_model.port_speed_gbps
        return down / up


class _Layers(NamedTuple):
    """The layers above the leaves (see :class:`Design`): spines per group, SUs per pod, spine ports towards the
    leaves and towards the super-spines, super-spines per group (the last two 0 for 2 tiers)."""

    spines: int
    sus_per_pod: int
    spine_down: int
    spine_up: int = 0
    per_group: int = 0


def _smallest_divisor_at_least(n: int, at_least: int) -> int | None:
    for d in range(max(1, at_least), n + 1):
        if n % d == 0:
            return d
    return None


def resolve_models(intent: Intent) -> dict[str, SwitchModel]:
    from hwaac.model.loader import builtin_switch_models

    return {**builtin_switch_models(), **intent.switch_models}


def _capacity_field(intent: Intent) -> str:
    """The field that sets the capacity the spines are sized for: su_capacity when written, else su_count."""
    return "fabric.su_capacity" if "su_capacity" in intent.fabric.model_fields_set else "fabric.su_count"


def _two_tiers(intent: Intent, capacity: int, up: int, spine_m: SwitchModel) -> _Layers:
    """The spines of a 2-tier fabric sized for ``capacity`` SUs of leaves with ``up`` uplinks each."""
    f, sw = intent.fabric, intent.switches
    leaves_cap = capacity * f.rails  # per plane
    spine_down = spine_m.ports
    need = math.ceil(leaves_cap * up / spine_down)
    spines = sw.spine.per_plane or _smallest_divisor_at_least(up, need)
    if spines is None or up % spines or leaves_cap * (up // spines) > spine_down:
        # the most SUs: every leaf uplink to its own spine (one link per leaf and spine), or with per_plane
        # spines up // per_plane links per leaf and spine; a spine takes spine_down // links leaves
        per = sw.spine.per_plane
        fit = (spine_down // (up // per) if per and per <= up and up % per == 0 else spine_down) // f.rails
        fix = f"at most {fit} SUs for 2 tiers with these models (or fabric.tiers: 3)"
        if per and (per > up or up % per):
            fix = f"a divisor of the {up} leaf uplinks (then {fix.removeprefix('at most ')})"
        raise DesignError(
            [
                IntentIssue(
                    "switches.spine.per_plane" if per else _capacity_field(intent),
                    f"{leaves_cap} leaves x {up} uplinks do not fit {spines or need} spines of "
                    f"{spine_m.ports} ports with every leaf linked equally to every spine",
                    per or capacity,
                    fix,
                    rule="spines-do-not-fit",
                )
            ]
        )
    return _Layers(spines, capacity, spine_down)


def _three_tiers(intent: Intent, capacity: int, up: int, spine_m: SwitchModel, ss_m: SwitchModel) -> _Layers:
    """Pods of SUs under their own spines, super-spines above, sized for ``capacity`` SUs."""
    f, sw = intent.fabric, intent.switches
    assert sw.super_spine is not None
    spine_down = sw.spine.downlinks or spine_m.ports // 2
    spine_up = spine_m.ports - spine_down
    if spine_up <= 0:
        raise DesignError(
            [
                IntentIssue(
                    "switches.spine.downlinks",
                    "leaves no spine port for super-spine uplinks",
                    spine_down,
                    f"< {spine_m.ports}",
                    rule="spine-downlinks-leave-no-uplinks",
                )
            ]
        )
    spines = sw.spine.per_plane or up  # one link from each leaf to each spine fits the most SUs in a pod
    if up % spines:
        raise DesignError(
            [
                IntentIssue(
                    "switches.spine.per_plane",
                    "must divide the leaf uplinks",
                    spines,
                    f"a divisor of {up}",
                    rule="spine-count-not-divisor",
                )
            ]
        )
    lps = up // spines
    max_sus_pod = spine_down // (lps * f.rails)
    sus_per_pod = sw.spine.sus_per_pod or min(max_sus_pod, capacity)
    if sus_per_pod < 1 or sus_per_pod * f.rails * lps > spine_down:
        raise DesignError(
            [
                IntentIssue(
                    "switches.spine.sus_per_pod",
                    f"a pod of {sus_per_pod} SUs needs "
                    f"{sus_per_pod * f.rails * lps} spine downlinks, spines have {spine_down}",
                    sus_per_pod,
                    f"1..{max_sus_pod}",
                    rule="pod-too-large",
                )
            ]
        )
    pods_cap = math.ceil(capacity / sus_per_pod)
    need = math.ceil(pods_cap * spine_up / ss_m.ports)
    per_group = sw.super_spine.per_group or _smallest_divisor_at_least(spine_up, need)
    if per_group is None or spine_up % per_group or pods_cap * (spine_up // per_group) > ss_m.ports:
        # the most pods: every spine uplink to its own super-spine (per_group = spine_up), or with per_group
        # super-spines spine_up // per_group links per spine and super-spine; a super-spine takes ports // links
        given = sw.super_spine.per_group
        ok = given is not None and given <= spine_up and spine_up % given == 0
        max_sus = (ss_m.ports // (spine_up // given) if ok and given else ss_m.ports) * sus_per_pod
        raise DesignError(
            [
                IntentIssue(
                    "switches.super_spine.per_group" if given else _capacity_field(intent),
                    f"{pods_cap} pods x {spine_up} spine uplinks do not fit super-spines of {ss_m.ports} ports",
                    given or capacity,
                    (f"a divisor of {spine_up} that is >= {need}; " if given else "")
                    + f"at most {max_sus} SUs with these models (pods of {sus_per_pod} SUs)",
                    rule="super-spines-do-not-fit",
                )
            ]
        )
    return _Layers(spines, sus_per_pod, spine_down, spine_up, per_group)


def derive(intent: Intent) -> Design:
    """Compute the :class:`Design` of ``intent``. Raises :class:`DesignError` naming the fields at fault."""
    f, sw = intent.fabric, intent.switches
    models = resolve_models(intent)
    issues: list[IntentIssue] = []

    def model(path: str, name: str) -> SwitchModel | None:
        if name not in models:
            issues.append(
                IntentIssue(
                    path,
                    "unknown switch model",
                    name,
                    "one of " + ", ".join(sorted(models)),
                    rule="unknown-switch-model",
                )
            )
            return None
        return models[name]

    leaf_m = model("switches.leaf.model", sw.leaf.model)
    spine_m = model("switches.spine.model", sw.spine.model)
    ss_m = None
    if f.tiers == 3:
        if sw.super_spine is None:
            issues.append(
                IntentIssue(
                    "switches.super_spine",
                    "required for a 3-tier fabric",
                    None,
                    "a mapping with at least `model`",
                    rule="three-tier-without-super-spine",
                )
            )
        else:
            ss_m = model("switches.super_spine.model", sw.super_spine.model)
    if issues or leaf_m is None or spine_m is None:
        raise DesignError(issues)

    capacity = f.su_capacity or f.su_count
    if capacity < f.su_count:
        raise DesignError(
            [
                IntentIssue(
                    "fabric.su_capacity",
                    "smaller than su_count",
                    capacity,
                    f">= su_count ({f.su_count})",
                    rule="capacity-below-count",
                )
            ]
        )

    # --- leaf ports
    down = sw.leaf.downlinks or f.nodes_per_su
    up = sw.leaf.uplinks if sw.leaf.uplinks is not None else math.ceil(down / sw.leaf.oversubscription)
    if f.nodes_per_su > down:
        issues.append(
            IntentIssue(
                "switches.leaf.downlinks",
                f"too few leaf downlinks for {f.nodes_per_su} nodes per SU",
                down,
                f">= fabric.nodes_per_su ({f.nodes_per_su})",
                rule="too-few-downlinks",
            )
        )
    if leaf_m.port_speed_gbps != f.host_port_speed_gbps:
        issues.append(
            IntentIssue(
                "switches.leaf.model",
                f"leaf ports run at {leaf_m.port_speed_gbps} Gb/s but hosts at {f.host_port_speed_gbps} Gb/s",
                sw.leaf.model,
                f"a model with {f.host_port_speed_gbps} Gb/s ports (or a matching breakout)",
                rule="leaf-speed-vs-host",
            )
        )
    upper = [("switches.spine.model", sw.spine.model, spine_m)]
    if ss_m is not None and sw.super_spine is not None:
        upper.append(("switches.super_spine.model", sw.super_spine.model, ss_m))
    for path, name, m in upper:
        if m.port_speed_gbps != leaf_m.port_speed_gbps:
            issues.append(
                IntentIssue(
                    path,
                    f"ports run at {m.port_speed_gbps} Gb/s but leaf ports at "
                    f"{leaf_m.port_speed_gbps} Gb/s; one cable needs one speed at both ends",
                    name,
                    f"a model with {leaf_m.port_speed_gbps} Gb/s ports (or a matching breakout)",
                    rule="spine-speed-mismatch",
                )
            )
    if down + up > leaf_m.ports:
        issues.append(
            IntentIssue(
                "switches.leaf",
                f"{down} downlinks + {up} uplinks need {down + up} ports but {sw.leaf.model} has {leaf_m.ports}",
                down + up,
                f"<= {leaf_m.ports} ports (fewer nodes per SU, or oversubscription > 1)",
                rule="too-few-leaf-ports",
            )
        )
    if issues:
        raise DesignError(issues)

    if f.tiers == 2:
        spines, sus_per_pod, spine_down, spine_up, per_group = _two_tiers(intent, capacity, up, spine_m)
    else:
        assert ss_m is not None  # set for 3 tiers (or refused above)
        spines, sus_per_pod, spine_down, spine_up, per_group = _three_tiers(intent, capacity, up, spine_m, ss_m)
    return Design(
        tiers=f.tiers,
        planes=f.planes,
        rails=f.rails,
        nodes_per_su=f.nodes_per_su,
        su_count=f.su_count,
        su_capacity=capacity,
        leaf_model=leaf_m,
        spine_model=spine_m,
        super_spine_model=ss_m,
        leaf_downlinks=down,
        leaf_uplinks=up,
        spines_per_group=spines,
        links_per_leaf_spine=up // spines,
        sus_per_pod=sus_per_pod,
        spine_downlinks=spine_down,
        spine_uplinks=spine_up,
        super_spines_per_group=per_group,
        links_per_spine_super_spine=spine_up // per_group if per_group else 0,
    )
