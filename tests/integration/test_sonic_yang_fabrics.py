"""Every rendered config_db.json of the demo and of every inventory/examples/*/ fabric passes SONiC's own YANG
validation (``sonic-yang-validate``, the check of ``config reload`` and GCU), for each SONiC release the intent can
name.

The release changes only BGP_NEIGHBOR(_AF) admin_status and DEVICE_METADATA bgp_router_id
(:mod:`hwaac.model.sonic_releases`). So every switch of every fabric is validated for the default release, and for
each other release (and path) every switch's config is checked to differ from its default one in exactly those
fields, and one switch per role and fabric is validated: one ``sonic-yang-validate`` run per release. Releases
before 202505 are refused unless the path is chosen; the ``frrcfgd`` path is YANG-invalid by design, on exactly the
admin_status fields.
"""

from __future__ import annotations

import io
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from hwaac.errors import IntentError
from hwaac.model.intent import Intent
from hwaac.model.sonic_releases import ROLES
from hwaac.plan import build_plan
from hwaac.plan.model import Plan
from hwaac.render import render_to_dir
from hwaac.render.sonic import render_config_db
from hwaac.sonic_toolkit import Toolkit, yang_validate
from hwaac.validate import load_intent, load_intent_source

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "inventory" / "examples"
FABRICS = [ROOT / "inventory" / "demo", *sorted(p.parent for p in EXAMPLES.glob("*/fabric.yml"))]
FABRIC_IDS = [f.name for f in FABRICS]
VARIANTS = [("202505", None), ("202511", None)] + [
    (r, p) for r in ("202305", "202311", "202405", "202411") for p in ("yang", "frrcfgd")
]
BEFORE_UP_DOWN = ("202305", "202311", "202405", "202411")


def _with_release(fabric: Path, release: str, path: str | None) -> dict[str, Any]:
    d = YAML(typ="safe").load((fabric / "fabric.yml").read_text())
    for role in ROLES:
        spec = d["switches"].get(role)
        if spec is not None:
            spec["sonic_release"] = release
            if path:
                spec["sonic_bgp_admin_status"] = path
    return d


@cache
def _plan(fabric: Path, release: str = "", path: str | None = None) -> Plan:
    if not release:
        return build_plan(load_intent(fabric))
    return build_plan(Intent.model_validate(_with_release(fabric, release, path)))


@cache
def _configs(fabric: Path, release: str = "", path: str | None = None) -> dict[str, dict[str, Any]]:
    plan = _plan(fabric, release, path)
    return {s.name: render_config_db(plan, s) for s in plan.switches}


@pytest.mark.parametrize(
    "fabric",
    [
        pytest.param(f, marks=pytest.mark.cost({"b200-3tier": 55, "b300-twin-plane": 30}.get(f.name, 10)))
        for f in FABRICS
    ],
    ids=FABRIC_IDS,
)
def test_every_rendered_config_is_yang_valid(fabric: Path, sonic_toolkit: Toolkit, tmp_path: Path):
    out = tmp_path / "render"
    render_to_dir(_plan(fabric), out)  # as `hwaac plan FABRIC -o DIR` writes it
    files = sorted(out.glob("switches/*/config_db.json"))
    assert len(files) == len(_plan(fabric).switches) > 0
    results = yang_validate(files, toolkit=sonic_toolkit)
    invalid = [(Path(r.file).parent.name, [str(e) for e in r.errors][:3]) for r in results if not r.valid]
    assert not invalid, f"{fabric.name}: {len(invalid)} of {len(files)} configs fail SONiC's YANG: {invalid[:3]}"


def _release_fields(cfg: dict[str, Any]) -> dict[str, Any]:
    """``cfg`` without the fields the release decides (for comparing a release's render with the default one)."""
    out = json.loads(json.dumps(cfg))
    out["DEVICE_METADATA"]["localhost"].pop("bgp_router_id", None)
    for table in ("BGP_NEIGHBOR", "BGP_NEIGHBOR_AF"):
        for entry in out.get(table, {}).values():
            entry.pop("admin_status", None)
    return out


@pytest.mark.parametrize(("release", "path"), VARIANTS, ids=[f"{r}-{p or 'default'}" for r, p in VARIANTS])
def test_each_release_renders_yang_valid_configs(
    release: str, path: str | None, sonic_toolkit: Toolkit, tmp_path: Path
):
    files, expected_errors = [], {}
    for fabric in FABRICS:
        default, configs = _configs(fabric), _configs(fabric, release, path)
        assert configs.keys() == default.keys()
        for name, cfg in configs.items():
            assert _release_fields(cfg) == _release_fields(default[name]), f"{fabric.name} {name}"
        roles: dict[str, str] = {}
        for sw in _plan(fabric, release, path).switches:
            roles.setdefault(sw.role, sw.name)
        for role, name in roles.items():
            cfg = configs[name]
            assert ("bgp_router_id" in cfg["DEVICE_METADATA"]["localhost"]) == (release >= "202405")
            values = {e["admin_status"] for t in ("BGP_NEIGHBOR", "BGP_NEIGHBOR_AF") for e in cfg[t].values()}
            assert values == ({"true"} if path == "frrcfgd" else {"up"}), f"{fabric.name} {role}"
            file = tmp_path / fabric.name / name / "config_db.json"
            file.parent.mkdir(parents=True)
            file.write_text(json.dumps(cfg, indent=2))
            files.append(file)
            expected_errors[str(file)] = (
                len(cfg["BGP_NEIGHBOR"]) + len(cfg["BGP_NEIGHBOR_AF"]) if path == "frrcfgd" else 0
            )
    results = yang_validate(files, toolkit=sonic_toolkit)
    for r in results:
        if expected_errors[r.file] == 0:
            assert r.valid, f"{r.file}: {[str(e) for e in r.errors][:3]}"
            continue
        # the frrcfgd path: true/false, which SONiC's YANG refuses -- and nothing else
        assert not r.valid and len(r.errors) == expected_errors[r.file], r.file
        assert all(
            e.table in ("BGP_NEIGHBOR", "BGP_NEIGHBOR_AF")
            and e.field == "admin_status"
            and 'Invalid enumeration value "true"' in e.message
            for e in r.errors
        ), r.errors[:3]


@pytest.mark.parametrize("release", BEFORE_UP_DOWN)
@pytest.mark.parametrize("fabric", FABRICS, ids=FABRIC_IDS)
def test_release_before_202505_is_refused_without_a_path(fabric: Path, release: str):
    d = _with_release(fabric, release, None)
    text = io.StringIO()
    YAML(typ="safe").dump(d, text)
    with pytest.raises(IntentError) as info:
        load_intent_source(text.getvalue(), str(fabric / "fabric.yml"))
    rules = {i.rule for i in info.value.issues}
    assert rules == {"sonic-bgp-admin-status-conflict"}
    assert {i.path for i in info.value.issues} == {f"switches.{r}.sonic_release" for r in ROLES if d["switches"].get(r)}
