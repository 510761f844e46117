"""The Grafana dashboard of one fabric's network health (``hwaac health dashboard``), built with the builders of
grafana-foundation-sdk for the Grafana 11.6 schema: a fabric row (SLIs, suspects, coverage, BGP, path diversity,
active probes), then one row per (plane, rail) of the plan with that rail's SLIs per SU. Queries read the exporter's
series and the recording rules of ``files/prometheus/hwaac-network-sli.rules.yml``; thresholds are the SLO file's, so
the red line is the SLO. What each row shows and how to import it: ``docs/network-health-prometheus.md``
"Grafana dashboard".
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from grafana_foundation_sdk.builders import common as cb
from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.builders import prometheus, stat, table, timeseries
from grafana_foundation_sdk.cog import variants
from grafana_foundation_sdk.cog.builder import Builder
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

from hwaac.plan.model import Plan
from hwaac.telemetry.dashboard_slis import SLIS
from hwaac.telemetry.slo import PROBE_LOSS, Objective, SloSet, default_slos

DATASOURCE = dm.DataSourceRef(type_val="prometheus", uid="${datasource}")
FABRIC_SEL = 'fabric="$fabric"'
UID_PREFIX = "hwaac-net-"
UID_MAX = 40  # Grafana docs, HTTP API "Dashboard API": "The uid can have a maximum length of 40 characters"
FABRIC_VARIABLE_QUERY = "label_values(hwaac_link_planned, fabric)"
SU_LEGEND = "SU {{su}} ({{leaf}})"
Queries = list[Builder[variants.Dataquery]]  # a panel's targets (here each a prometheus.Dataquery)


GRID = 24  # columns of Grafana's dashboard grid (gridPos.w)
SLI_WIDTH = GRID // len(SLIS)  # the SLIs side by side in one line


def dashboard_uid(fabric: str) -> str:
    """A stable uid from the fabric name: ``hwaac-net-<name>``, or when that is longer than Grafana allows, the
    name cut short and 8 hex digits of its SHA-256 (two long names that share a prefix stay apart)."""
    uid = UID_PREFIX + fabric
    if len(uid) <= UID_MAX:
        return uid
    digest = hashlib.sha256(fabric.encode()).hexdigest()[:8]
    return f"{UID_PREFIX}{fabric[: UID_MAX - len(UID_PREFIX) - 9]}-{digest}"


def plane_rails(plan: Plan) -> list[tuple[int, int]]:
    """The (plane, rail) pairs of the plan's leaves, plane first, in order."""
    return sorted({(s.plane, s.rail) for s in plan.switches if s.role == "leaf" and s.rail is not None})


def _thresholds(o: Objective) -> db.ThresholdsConfig:
    """Red past the SLO's bound, orange past its warn level, else green (Grafana colours a value at or above a
    step with that step's colour)."""
    if o.max is not None:
        steps = [dm.Threshold(None, "green")]
        if o.warn is not None and o.warn < o.max:
            steps.append(dm.Threshold(o.warn, "orange"))
        steps.append(dm.Threshold(o.max, "red"))
    else:
        assert o.min is not None  # Objective's validator: exactly one of min and max
        steps = [dm.Threshold(None, "red")]
        if o.warn is not None and o.warn > o.min:
            steps += [dm.Threshold(o.min, "orange"), dm.Threshold(o.warn, "green")]
        else:
            steps.append(dm.Threshold(o.min, "green"))
    return db.ThresholdsConfig().mode(dm.ThresholdsMode.ABSOLUTE).steps(steps)


def _slo_words(name: str, o: Objective | None) -> str:
    if o is None:
        return f"No SLO for {name} in the SLO file: no threshold."
    bound = f"≥ {o.min:g}" if o.min is not None else f"≤ {o.max:g}"
    warn = f", warn at {o.warn:g}" if o.warn is not None else ""
    return f"SLO {name} {bound} ({o.unit}{warn}): the red line."


def _query(
    expr: str, legend: str, ref: str = "A", instant: bool = False, as_table: bool = False
) -> prometheus.Dataquery:
    q = prometheus.Dataquery().expr(expr).legend_format(legend).ref_id(ref).datasource(DATASOURCE)
    q = q.instant() if instant else q.range()
    if as_table:
        q = q.format(PromQueryFormat.TABLE)
    return q


class _Ids:
    """Panel ids, 1 up, in the order panels are made (stable links such as ``viewPanel=N``)."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> int:
        self.n += 1
        return self.n


def _panel[P: (timeseries.Panel, stat.Panel)](
    p: P, ids: _Ids, title: str, description: str, unit: str, queries: Queries, width: int, height: int
) -> P:
    """What every panel of the dashboard sets: its id, texts, data source, unit, place and queries."""
    return (
        p.id(ids())
        .title(title)
        .description(description)
        .datasource(DATASOURCE)
        .unit(unit)
        .span(width)
        .height(height)
        .targets(queries)
    )


def _series(
    ids: _Ids,
    title: str,
    description: str,
    unit: str,
    queries: Queries,
    objective: Objective | None,
    width: int,
    height: int = 8,
    log: bool = False,
) -> timeseries.Panel:
    p = (
        _panel(timeseries.Panel(), ids, title, description, unit, queries, width, height)
        .color_scheme(db.FieldColor().mode(dm.FieldColorModeId.PALETTE_CLASSIC))
        .legend(
            cb.VizLegendOptions()
            .display_mode(cm.LegendDisplayMode.LIST)
            .placement(cm.LegendPlacement.BOTTOM)
            .show_legend(True)
        )
        .tooltip(cb.VizTooltipOptions().mode(cm.TooltipDisplayMode.MULTI).sort(cm.SortOrder.DESCENDING))
    )
    if objective is not None:
        p = p.thresholds(_thresholds(objective)).thresholds_style(
            cb.GraphThresholdsStyleConfig().mode(cm.GraphThresholdsStyleMode.LINE_AND_AREA)
        )
    if log:
        p = p.scale_distribution(cb.ScaleDistributionConfig().type(cm.ScaleDistribution.LOG).log(10))
    return p


def _stat(
    ids: _Ids,
    title: str,
    description: str,
    unit: str,
    queries: Queries,
    thresholds: db.ThresholdsConfig | None,
    width: int,
    height: int,
    named: bool = True,
) -> stat.Panel:
    text = cm.BigValueTextMode.VALUE_AND_NAME if named else cm.BigValueTextMode.VALUE
    p = (
        _panel(stat.Panel(), ids, title, description, unit, queries, width, height)
        .reduce_options(cb.ReduceDataOptions().calcs(["lastNotNull"]).values(False))
        .graph_mode(cm.BigValueGraphMode.NONE)
        .text_mode(text)
    )
    if thresholds is None:
        return p.color_mode(cm.BigValueColorMode.NONE)
    return p.thresholds(thresholds).color_mode(cm.BigValueColorMode.BACKGROUND)


def _fabric_panels(ids: _Ids, slos: SloSet) -> list[Any]:
    """The fabric row: its SLIs, suspects, coverage, the sweep, availability per plane, BGP and path diversity."""
    sel = FABRIC_SEL
    out: list[Any] = []
    for s in SLIS:
        o = slos.slos.get(s.name)
        expr = s.fabric.format(sel=sel)
        out.append(
            _stat(
                ids,
                s.title,
                f"The fabric: {s.what} {_slo_words(s.name, o)}",
                s.unit,
                [_query(expr, "fabric", instant=True)],
                _thresholds(o) if o else None,
                SLI_WIDTH,
                4,
                named=False,
            )
        )
    count = (
        _stat(
            ids,
            "Suspects",
            "Ranked suspects of hwaac's localisation rules, by severity (hwaac_suspects).",
            "short",
            [_query(f"hwaac_suspects{{{sel}}}", "{{severity}}", instant=True)],
            db.ThresholdsConfig()
            .mode(dm.ThresholdsMode.ABSOLUTE)
            .steps([dm.Threshold(None, "green"), dm.Threshold(1, "red")]),
            4,
            8,
        )
        .override_by_name("warn", [dm.DynamicConfigValue("color", {"mode": "fixed", "fixedColor": "orange"})])
        .override_by_name("info", [dm.DynamicConfigValue("color", {"mode": "fixed", "fixedColor": "blue"})])
    )
    coverage = _stat(
        ids,
        "Coverage gaps",
        "What the samples did not cover (devices and planned ports not "
        "sampled, samples the plan does not know, read and rate errors): hwaac_coverage_gaps.",
        "short",
        [_query(f"hwaac_coverage_gaps{{{sel}}} > 0", "{{what}}", instant=True)],
        db.ThresholdsConfig()
        .mode(dm.ThresholdsMode.ABSOLUTE)
        .steps([dm.Threshold(None, "green"), dm.Threshold(1, "orange")]),
        4,
        8,
    ).no_value("none")
    sweep = _stat(
        ids,
        "Sweep",
        "Time since the latest sweep, the interval the rates are over, and time since the "
        "latest active probes were sent.",
        "s",
        [
            _query(f"time() - hwaac_fabric_sweep_timestamp_seconds{{{sel}}}", "since the latest sweep", instant=True),
            _query(f"hwaac_fabric_rate_interval_seconds{{{sel}}}", "rated interval", "B", instant=True),
            _query(
                f"time() - hwaac_probe_sweep_timestamp_seconds{{{sel}}}", "since the latest probes", "C", instant=True
            ),
        ],
        None,
        4,
        8,
    )
    avail = slos.slos.get("availability")
    planes = _series(
        ids,
        "Availability per plane",
        f"Planned links up / planned links whose state was read, per plane. {_slo_words('availability', avail)}",
        "percentunit",
        [_query(f"hwaac:sli_availability:plane{{{sel}}}", "plane {{plane}}")],
        avail,
        12,
    )
    out += [count, coverage, sweep, planes]
    out.append(_suspect_table(ids))
    bgp = slos.slos.get("bgp_drops_per_hour")
    out.append(
        _series(
            ids,
            "BGP session drops per hour",
            "BGP sessions dropped from Established per hour: the "
            "fabric's sum and the leaves above the SLO (FRR connectionsDropped). "
            + _slo_words("bgp_drops_per_hour", bgp),
            "short",
            [
                _query(f"sum by (fabric) (hwaac:sli_bgp_drops_per_hour:leaf{{{sel}}})", "fabric"),
                _query(
                    f"topk(5, hwaac:sli_bgp_drops_per_hour:leaf{{{sel}}} > on (fabric) group_left () "
                    f'hwaac_slo_bgp_drops_per_hour{{{sel},bound="max"}})',
                    "{{leaf}}",
                    "B",
                ),
            ],
            bgp,
            6,
        )
    )
    path = slos.slos.get("path_diversity")
    out.append(
        _series(
            ids,
            "Path diversity",
            "Narrowest ECMP width of a leaf's BGP routes / its planned uplinks: "
            "the fabric's narrowest leaf and the leaves below the SLO. " + _slo_words("path_diversity", path),
            "percentunit",
            [
                _query(f"min by (fabric) (hwaac:sli_path_diversity:leaf{{{sel}}})", "narrowest leaf"),
                _query(
                    f"bottomk(5, hwaac:sli_path_diversity:leaf{{{sel}}} < on (fabric) group_left () "
                    f'hwaac_slo_path_diversity{{{sel},bound="min"}})',
                    "{{leaf}}",
                    "B",
                ),
            ],
            path,
            6,
        )
    )
    out += _probe_panels(ids, slos)
    return out


def _probe_panels(ids: _Ids, slos: SloSet) -> list[Any]:
    """The fabric row's active probes: the worst cables' probe loss, and the probed flows by state."""
    sel = FABRIC_SEL
    o = slos.slos.get(PROBE_LOSS)
    worst = _series(
        ids,
        "Probe loss, worst cables",
        "The 5 cables (or sets of parallel cables the hops did not tell "
        "apart) whose active probes lost the largest share on the way out, with at least "
        "probe_min_probes probes (hwaac:sli_probe_loss_ratio:link). A cable that shares flows with a "
        "lossy one shows part of its loss; HwaacProbePathLoss fires on the one tomography names. "
        + _slo_words(PROBE_LOSS, o),
        "percentunit",
        [_query(f"topk(5, hwaac:sli_probe_loss_ratio:link{{{sel}}})", "{{cable}}{{cables}}")],
        o,
        12,
    )
    flows = _series(
        ids,
        "Probed flows",
        "The latest sweep's probed flows by state (hwaac_probe_flows): clean and "
        "lossy were judged; no_path (no complete mapped path), not_judged (no count or a host dropped) "
        "and unreachable (nothing came back) were not.",
        "short",
        [_query(f"hwaac_probe_flows{{{sel}}}", "{{state}}")],
        None,
        12,
    )
    return [worst, flows]


# the suspect table's columns in order: exporter labels, then the two values (rank and score)
SUSPECT_COLUMNS = ("rank", "severity", "rule", "kind", "component", "device", "port", "cable", "hosts", "score")


def _suspect_table(ids: _Ids) -> table.Panel:
    sel = FABRIC_SEL
    organize = {
        "excludeByName": {"Time": True, "__name__": True, "fabric": True, "job": True, "instance": True},
        "renameByName": {"Value #A": "rank", "Value #B": "score"},
        "indexByName": {
            ("Value #A" if c == "rank" else "Value #B" if c == "score" else c): i for i, c in enumerate(SUSPECT_COLUMNS)
        },
    }
    return (
        table.Panel()
        .id(ids())
        .title("Suspects, ranked")
        .datasource(DATASOURCE)
        .span(12)
        .height(8)
        .description(
            "hwaac's ranked suspects (hwaac_suspect_rank; score: the strongest evidence as a multiple "
            "of its SLO). hwaac health fabric gives each one's reasoning and evidence."
        )
        .targets(
            [
                _query(f"hwaac_suspect_rank{{{sel}}}", "", "A", instant=True, as_table=True),
                _query(f"hwaac_suspect_score{{{sel}}}", "", "B", instant=True, as_table=True),
            ]
        )
        .with_transformation(dm.DataTransformerConfig("merge", options={}))
        .with_transformation(dm.DataTransformerConfig("organize", options=organize))
        .sort_by([cb.TableSortByFieldState().display_name("rank").desc(False)])
        .no_value("no suspect")
    )


def _rail_panels(ids: _Ids, slos: SloSet, plane: int, rail: int) -> list[timeseries.Panel]:
    sel = f'{FABRIC_SEL},plane="{plane}",rail="{rail}"'
    out = []
    for s in SLIS:
        o = slos.slos.get(s.name)
        out.append(
            _series(
                ids,
                s.title,
                f"Plane {plane}, rail {rail}, per SU: {s.what} {_slo_words(s.name, o)}",
                s.unit,
                [_query(s.per_su.format(sel=sel), SU_LEGEND)],
                o,
                SLI_WIDTH,
                log=s.name == "pre_fec_ber",
            )
        )
    return out


def row_title(plane: int, rail: int) -> str:
    return f"Plane {plane}, rail {rail}"


def build(plan: Plan, slos: SloSet | None = None) -> db.Dashboard:
    """The dashboard builder of ``plan`` with the thresholds of ``slos`` (the shipped defaults when None)."""
    slos = slos or default_slos()
    fabric = plan.intent.fabric.name
    ids = _Ids()
    d = (
        db.Dashboard(f"hwaac network health: {fabric}")
        .uid(dashboard_uid(fabric))
        .description(
            f"Generated by `hwaac health dashboard` from the plan of fabric {fabric}: regenerate it rather "
            "than edit it. Rows: the fabric, then each (plane, rail) of the plan."
        )
        .tags(["hwaac", "network-health", fabric])
        .time("now-6h", "now")
        .refresh("1m")
        .timezone("browser")
        .tooltip(dm.DashboardCursorSync.CROSSHAIR)
        .with_variable(db.DatasourceVariable("datasource").label("Prometheus").type("prometheus"))
        .with_variable(
            db.QueryVariable("fabric")
            .label("Fabric")
            .datasource(DATASOURCE)
            .query(FABRIC_VARIABLE_QUERY)
            .refresh(dm.VariableRefresh.ON_DASHBOARD_LOAD)
            .sort(dm.VariableSort.ALPHABETICAL_ASC)
            .current(dm.VariableOption(selected=True, text=fabric, value=fabric))
        )
    )
    d = d.with_row(db.Row("Fabric").id(ids()))
    for panel in _fabric_panels(ids, slos):
        d = d.with_panel(panel)
    for plane, rail in plane_rails(plan):
        row = db.Row(row_title(plane, rail)).id(ids())
        for panel in _rail_panels(ids, slos, plane, rail):
            row = row.with_panel(panel)  # a row holding panels is collapsed: its queries run when it is opened
        d = d.with_row(row)
    return d


def dashboard(plan: Plan, slos: SloSet | None = None) -> dict[str, Any]:
    """The Grafana dashboard JSON model of ``plan`` (schemaVersion of the SDK's Grafana 11.6 build)."""
    return json.loads(json.dumps(build(plan, slos).build(), cls=JSONEncoder))


def dashboard_json(plan: Plan, slos: SloSet | None = None) -> str:
    """:func:`dashboard` as the text written to a file (2-space indent, a final newline)."""
    return json.dumps(build(plan, slos).build(), cls=JSONEncoder, indent=2, ensure_ascii=False) + "\n"


__all__ = ["build", "dashboard", "dashboard_json", "dashboard_uid", "plane_rails", "row_title"]
