"""The SONiC release per switch role: the intent fields, the refusal of the admin_status conflict before 202505,
what the renderer writes per release and path, and the release in plan.json."""

from __future__ import annotations

import typing
from functools import cache
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from hwaac.errors import IntentError
from hwaac.model.intent import Intent
from hwaac.model.sonic_releases import DEFAULT_RELEASE, RELEASES, ReleaseName, bgp_admin_values
from hwaac.plan import build_plan
from hwaac.plan.serialize import plan_to_dict
from hwaac.render.sonic import render_config_db
from hwaac.validate import load_intent, load_intent_source

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "inventory" / "demo"
BEFORE_UP_DOWN = ("202305", "202311", "202405", "202411")


@cache
def _demo_text() -> str:
    return (DEMO / "fabric.yml").read_text()


def demo_with(**leaf: str) -> str:
    """The demo intent with extra fields on switches.leaf (one line each, right after ``leaf:``)."""
    lines = "".join(f"    {k}: {v}\n" for k, v in leaf.items())
    return _demo_text().replace("  leaf:\n", "  leaf:\n" + lines, 1)


def _line_of(text: str, needle: str) -> int:
    return next(i + 1 for i, line in enumerate(text.splitlines()) if needle in line)


def test_release_table_is_the_literal_of_the_intent_field():
    assert tuple(RELEASES) == typing.get_args(ReleaseName)
    assert tuple(RELEASES) == ("202305", "202311", "202405", "202411", "202505", "202511")
    assert DEFAULT_RELEASE == "202505" and load_intent(DEMO).switches.leaf.sonic_release == "202505"


def test_release_written_as_a_number_is_its_name():
    intent = load_intent_source(demo_with(sonic_release="202511"), "demo.yml")
    assert intent.switches.leaf.sonic_release == "202511" and intent.switches.spine.sonic_release == "202505"


def test_unknown_release_lists_the_valid_ones_at_its_line():
    text = demo_with(sonic_release='"202406"')
    with pytest.raises(IntentError) as info:
        load_intent_source(text, "demo.yml")
    issue = next(i for i in info.value.issues if i.path == "switches.leaf.sonic_release")
    assert issue.line == _line_of(text, "sonic_release") and issue.value == "202406"
    assert issue.valid == "'202305', '202311', '202405', '202411', '202505' or '202511'"


@pytest.mark.parametrize("release", BEFORE_UP_DOWN)
def test_release_before_202505_is_refused_until_the_path_is_chosen(release: str):
    text = demo_with(sonic_release=release)
    with pytest.raises(IntentError) as info:
        load_intent_source(text, "demo.yml")
    (issue,) = info.value.issues
    assert (issue.rule, issue.path, issue.line) == (
        "sonic-bgp-admin-status-conflict",
        "switches.leaf.sonic_release",
        _line_of(text, "sonic_release"),
    )
    assert f"SONiC {release}: frrcfgd activates a BGP address family only with admin_status 'true'" in issue.message
    assert "sonic_bgp_admin_status frrcfgd" in issue.valid and "or yang" in issue.valid
    assert "GCU 'config apply-patch' refuses every patch" in issue.valid
    assert "frrcfgd does not activate the address family" in issue.valid
    for path in ("frrcfgd", "yang"):
        intent = load_intent_source(demo_with(sonic_release=release, sonic_bgp_admin_status=path), "demo.yml")
        assert intent.switches.leaf.sonic_bgp_admin_status == path


@pytest.mark.parametrize("release", ["202505", "202511"])
def test_frrcfgd_path_is_refused_where_up_down_work(release: str):
    with pytest.raises(IntentError) as info:
        load_intent_source(demo_with(sonic_release=release, sonic_bgp_admin_status="frrcfgd"), "demo.yml")
    (issue,) = info.value.issues
    assert (issue.rule, issue.path) == ("sonic-bgp-admin-status-needless", "switches.leaf.sonic_bgp_admin_status")
    load_intent_source(demo_with(sonic_release=release, sonic_bgp_admin_status="yang"), "demo.yml")


@pytest.mark.parametrize(
    ("release", "path", "values"),
    [
        ("202505", None, ("up", "down")),
        ("202511", None, ("up", "down")),
        ("202505", "yang", ("up", "down")),
        ("202411", "yang", ("up", "down")),
        ("202411", "frrcfgd", ("true", "false")),
        ("202305", "frrcfgd", ("true", "false")),
    ],
)
def test_admin_values(release: str, path: typing.Any, values: tuple[str, str]):
    assert bgp_admin_values(release, path) == values


def test_admin_values_refuse_the_unchosen_conflict():
    with pytest.raises(ValueError, match="SONiC 202411: BGP admin_status has no value both frrcfgd and YANG"):
        bgp_admin_values("202411", None)


def _plan(leaf: dict[str, str], spine: dict[str, str] | None = None):
    d = YAML(typ="safe").load(_demo_text())
    d["switches"]["leaf"].update(leaf)
    d["switches"]["spine"].update(spine or {})
    return build_plan(Intent.model_validate(d))


@pytest.mark.parametrize(
    ("release", "path", "admin", "router_id"),
    [
        ("202305", "yang", "up", False),
        ("202311", "frrcfgd", "true", False),
        ("202405", "yang", "up", True),
        ("202411", "frrcfgd", "true", True),
        ("202505", None, "up", True),
        ("202511", None, "up", True),
    ],
)
def test_render_follows_the_release(release: str, path: str | None, admin: str, router_id: bool):
    leaf = {"sonic_release": release} | ({"sonic_bgp_admin_status": path} if path else {})
    plan = _plan(leaf)
    cfg = render_config_db(plan, plan.switch_by_name["leaf-p0-su01-r0"])
    assert {n["admin_status"] for n in cfg["BGP_NEIGHBOR"].values()} == {admin}
    assert {n["admin_status"] for n in cfg["BGP_NEIGHBOR_AF"].values()} == {admin}
    assert ("bgp_router_id" in cfg["DEVICE_METADATA"]["localhost"]) == router_id
    spine = render_config_db(plan, plan.switch_by_name["spine-p0-01"])  # the spines keep the default release
    assert {n["admin_status"] for n in spine["BGP_NEIGHBOR"].values()} == {"up"}
    assert "bgp_router_id" in spine["DEVICE_METADATA"]["localhost"]


def test_render_of_an_unchosen_conflict_names_the_switch():
    d = YAML(typ="safe").load(_demo_text())
    d["switches"]["spine"]["sonic_release"] = "202405"
    with pytest.raises(IntentError, match=r"sonic-bgp|no value satisfies both"):
        build_plan(Intent.model_validate(d))  # the plan refuses it, as hwaac plan does
    plan = build_plan(Intent.model_validate(d), validate=False)  # the renderer refuses too, naming the switch
    with pytest.raises(ValueError, match=r"spine-p0-01 \(switches.spine\): SONiC 202405"):
        render_config_db(plan, plan.switch_by_name["spine-p0-01"])


def test_plan_json_records_each_switch_release():
    plan = _plan({"sonic_release": "202511"}, {"sonic_release": "202411", "sonic_bgp_admin_status": "frrcfgd"})
    switches = plan_to_dict(plan)["switches"]
    assert switches["leaf-p0-su01-r0"]["sonic_release"] == "202511"
    assert switches["spine-p0-01"]["sonic_release"] == "202411"
    assert {s["sonic_release"] for s in plan_to_dict(build_plan(load_intent(DEMO)))["switches"].values()} == {"202505"}
