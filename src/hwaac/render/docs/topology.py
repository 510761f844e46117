"""``topology.svg``: a picture of SU 1 and its planes, drawn with drawsvg.

One panel per plane: SU 1's nodes, its leaves and their spines, with node-leaf lines coloured by rail and
leaf-spine lines labelled with their number of parallel links, all taken from ``Plan.links``. No SVG
definitions, so no generated ids: the output is byte-identical across runs. What is drawn: docs/render.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import drawsvg as draw

from hwaac.plan.model import Plan

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
RAIL_COLORS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
    "#e7ba52",
    "#393b79",
    "#ad494a",
    "#637939",
    "#843c39",
    "#7b4173",
    "#3182bd",
)
UPLINK_COLOR = "#555555"
BOX_H = 30
MARGIN = 24
GAP = 26  # horizontal gap between boxes
SPINE_LEAF_GAP = 190
LEAF_NODE_GAP = 170
MAX_NODES, MAX_SPINES = 8, 10
SPINE_FILL, LEAF_FILL, GPU_FILL, APPLIANCE_FILL = "#dde8f5", "#e3f1e0", "#fdf1dc", "#f3dede"
BOX_FILLS = (("spine", SPINE_FILL), ("leaf", LEAF_FILL), ("GPU node", GPU_FILL), ("appliance", APPLIANCE_FILL))


def elide[T](items: Sequence[T], most: int) -> list[T | None]:
    """``items`` if there are at most ``most``; else the first ``most - 2``, ``None`` (an ellipsis), the last."""
    if len(items) <= most:
        return list(items)
    return [*items[: most - 2], None, items[-1]]


def _r(x: float) -> float:
    """Round a coordinate so the SVG text stays short (and identical across platforms)."""
    v = round(x, 1)
    return int(v) if v == int(v) else v


def _text(d: draw.Drawing, text: str, size: int, x: float, y: float, **kw: object) -> None:
    d.append(draw.Text(text, size, _r(x), _r(y), font_family=FONT, **kw))


def render_topology_svg(plan: Plan) -> str:
    """SVG text of the SU 1 topology of ``plan`` (see the module docstring)."""
    d_ = plan.design
    f = plan.intent.fabric
    speeds_up = min(d_.leaf_model.port_speed_gbps, d_.spine_model.port_speed_gbps)
    su_leaves = [s for s in plan.switches if s.role == "leaf" and s.su == 1]
    pod = su_leaves[0].pod if su_leaves else None
    su_nodes = sorted((n for n in plan.nodes if n.su == 1), key=lambda n: n.slot)
    shown_nodes = elide(su_nodes, MAX_NODES)

    # the lines, from the plan's links
    leaf_names = {s.name for s in su_leaves}
    node_names = {n.name for n in shown_nodes if n is not None}
    host_lines: list[tuple[str, str, int]] = []  # (node, leaf, rail)
    pairs: Counter[tuple[str, str]] = Counter()
    for ln in plan.links:
        if ln.kind == "host":
            if ln.a_device in node_names:
                host_lines.append((ln.a_device, ln.b_device, ln.rail or 0))
        elif ln.kind == "leaf_spine" and ln.a_device in leaf_names:
            pairs[ln.a_device, ln.b_device] += 1

    panels = []
    for p in range(d_.planes):
        leaves = sorted((s for s in su_leaves if s.plane == p), key=lambda s: s.rail or 0)
        plane_spines = [s for s in plan.switches if s.role == "spine" and s.plane == p and s.pod == pod]
        ss_count = sum(1 for s in plan.switches if s.role == "super_spine" and s.plane == p)
        panels.append((p, leaves, elide(plane_spines, MAX_SPINES), len(plane_spines), ss_count))

    names = [s.name for _, lv, sp, _, _ in panels for s in (*lv, *sp) if s is not None]
    names += [n.name for n in shown_nodes if n is not None]
    bw = max(110, int(max((len(n) for n in names), default=0) * 7.4) + 16)
    pitch = bw + GAP
    cols = max([len(shown_nodes)] + [max(len(lv), len(sp)) for _, lv, sp, _, _ in panels])
    width = max(2 * MARGIN + cols * pitch, 900)
    top_extra = 90 if d_.tiers == 3 else 0
    panel_h = 40 + top_extra + BOX_H + SPINE_LEAF_GAP + BOX_H + LEAF_NODE_GAP + BOX_H + 30
    legend_rows = (f.rails + 7) // 8
    height = 60 + d_.planes * (panel_h + 20) + 40 + legend_rows * 22 + 50

    d = draw.Drawing(width, height, id_prefix="topo")
    d.append(draw.Rectangle(0, 0, width, height, fill="white"))
    _text(d, f"{f.name}: topology of SU 1 of {d_.su_count}", 18, MARGIN, 30, font_weight="bold")
    _text(
        d,
        f"{d_.tiers} tiers, {d_.planes} plane(s), {d_.rails} rails, {d_.nodes_per_su} node slots per SU, "
        f"{d_.leaf_uplinks} uplinks per leaf",
        12,
        MARGIN,
        48,
        fill="#333333",
    )

    def row_x(n: int) -> list[float]:
        x0 = (width - n * pitch) / 2 + GAP / 2
        return [x0 + i * pitch for i in range(n)]

    def box(x: float, y: float, label: str, fill: str) -> None:
        d.append(draw.Rectangle(_r(x), _r(y), bw, BOX_H, rx=4, fill=fill, stroke="#333333", stroke_width=1))
        _text(d, label, 12, x + bw / 2, y + 19, text_anchor="middle")

    def ellipsis(x: float, y: float, hidden: int, what: str) -> None:
        _text(d, "…", 20, x + bw / 2, y + 16, text_anchor="middle")
        _text(d, f"{hidden} more {what}", 10, x + bw / 2, y + 30, text_anchor="middle", fill="#555555")

    y = 60
    for p, leaves, spines, n_spines, ss_count in panels:
        d.append(draw.Rectangle(MARGIN / 2, y, width - MARGIN, panel_h, rx=6, fill="#f7f7f7", stroke="#bbbbbb"))
        shown_n = sum(1 for n in shown_nodes if n is not None)
        scope = f"spines of pod {pod}" if d_.tiers == 3 else "spines"
        _text(
            d,
            f"Plane {p}: {len(leaves)} leaves of SU 1, {n_spines} {scope}, {shown_n} of {len(su_nodes)} nodes shown",
            14,
            MARGIN,
            y + 22,
            font_weight="bold",
        )
        spine_y = y + 40 + top_extra
        leaf_y = spine_y + BOX_H + SPINE_LEAF_GAP
        node_y = leaf_y + BOX_H + LEAF_NODE_GAP
        sx, lx, nx = row_x(len(spines)), row_x(len(leaves)), row_x(len(shown_nodes))

        if d_.tiers == 3:
            ss_y = y + 40
            d.append(
                draw.Rectangle(_r(sx[0]), ss_y, _r(sx[-1] + bw - sx[0]), 44, rx=4, fill="#e8e0f0", stroke="#333333")
            )
            _text(
                d,
                f"{ss_count} super-spines of plane {p} (not drawn)",
                12,
                width / 2,
                ss_y + 18,
                text_anchor="middle",
                font_weight="bold",
            )
            _text(
                d,
                f"spine j of every pod -> {d_.super_spines_per_group} super-spines of group j, "
                f"{d_.links_per_spine_super_spine} link(s) each",
                11,
                width / 2,
                ss_y + 35,
                text_anchor="middle",
            )
            for i, s in enumerate(spines):
                if s is not None:
                    cx = _r(sx[i] + bw / 2)
                    d.append(draw.Line(cx, ss_y + 44, cx, spine_y, stroke=UPLINK_COLOR, stroke_width=1.5))

        # leaf -> spine, one line per pair, label = parallel links
        spine_col = {s.name: i for i, s in enumerate(spines) if s is not None}
        n_sc = len(spines)
        labels = []
        for li, leaf in enumerate(leaves):
            for si, s in enumerate(spines):
                if s is None or not pairs[leaf.name, s.name]:
                    continue
                x1 = lx[li] + bw * (spine_col[s.name] + 0.5) / n_sc
                y1 = leaf_y
                x2 = sx[si] + bw * (li + 0.5) / len(leaves)
                y2 = spine_y + BOX_H
                d.append(
                    draw.Line(_r(x1), _r(y1), _r(x2), _r(y2), stroke=UPLINK_COLOR, stroke_width=1, stroke_opacity=0.7)
                )
                t = 0.12 + 0.72 * (si / max(1, n_sc - 1))  # labels of one spine share a height
                labels.append((x1 + t * (x2 - x1), y1 + t * (y2 - y1), pairs[leaf.name, s.name]))
        for x, yy, count in labels:
            _text(
                d,
                f"×{count}",
                10,
                x,
                yy + 3,
                text_anchor="middle",
                fill="#222222",
                stroke="white",
                stroke_width=3,
                paint_order="stroke",
            )

        # node -> leaf, one line per NIC port, coloured by rail
        leaf_col = {s.name: i for i, s in enumerate(leaves)}
        node_col = {n.name: i for i, n in enumerate(shown_nodes) if n is not None}
        for node, leaf_name, rail in host_lines:
            if leaf_name not in leaf_col:
                continue
            ni, li = node_col[node], leaf_col[leaf_name]
            x1 = nx[ni] + bw * (rail + 0.5) / d_.rails
            x2 = lx[li] + bw * (ni + 0.5) / len(shown_nodes)
            d.append(
                draw.Line(
                    _r(x1),
                    node_y,
                    _r(x2),
                    leaf_y + BOX_H,
                    stroke=RAIL_COLORS[rail % len(RAIL_COLORS)],
                    stroke_width=1.5,
                )
            )

        for i, s in enumerate(spines):
            if s is None:
                ellipsis(sx[i], spine_y, n_spines - (len(spines) - 1), "spines")
            else:
                box(sx[i], spine_y, s.name, SPINE_FILL)
        for i, s in enumerate(leaves):
            box(lx[i], leaf_y, s.name, LEAF_FILL)
        for i, n in enumerate(shown_nodes):
            if n is None:
                ellipsis(nx[i], node_y, len(su_nodes) - (len(shown_nodes) - 1), "nodes")
            else:
                box(nx[i], node_y, n.name, GPU_FILL if n.kind == "gpu" else APPLIANCE_FILL)
        y += panel_h + 20

    _legend(d, plan, y, speeds_up)
    return d.as_svg()


def _legend(d: draw.Drawing, plan: Plan, y: float, uplink_speed: int) -> None:
    rails = plan.design.rails
    _text(d, "Legend", 13, MARGIN, y + 14, font_weight="bold")
    y += 26
    for r in range(rails):
        row, col = divmod(r, 8)
        x = MARGIN + col * 110
        yy = y + row * 22
        d.append(draw.Line(x, yy, x + 30, yy, stroke=RAIL_COLORS[r % len(RAIL_COLORS)], stroke_width=3))
        _text(d, f"rail {r}", 12, x + 36, yy + 4)
    y += ((rails + 7) // 8) * 22
    d.append(draw.Line(MARGIN, y, MARGIN + 30, y, stroke=UPLINK_COLOR, stroke_width=1.5))
    _text(
        d,
        f"leaf-spine pair; ×N = N parallel links of {uplink_speed} Gb/s. Node -> leaf lines: one NIC port "
        f"of {plan.intent.fabric.host_port_speed_gbps} Gb/s each.",
        12,
        MARGIN + 36,
        y + 4,
    )
    y += 20
    for i, (label, fill) in enumerate(BOX_FILLS):
        x = MARGIN + i * 140
        d.append(draw.Rectangle(x, y - 8, 30, 14, rx=3, fill=fill, stroke="#333333"))
        _text(d, label, 12, x + 36, y + 4)
