"""hwaac.sonic_toolkit: locating the SONiC toolkit and its env.sh, and SONiC's own YANG validator and GCU dry run
through it (the real toolkit: the ``sonic_toolkit`` fixture of tests/conftest.py)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from hwaac import sonic_toolkit as st
from hwaac.plan import build_plan
from hwaac.render.sonic import render_config_db
from hwaac.validate import load_intent
from tests.fakes.simulate import factory_switch_config

ROOT = Path(__file__).resolve().parents[2]


def _kit(tmp_path: Path, env_sh: str | None = "export HWAAC_KIT_PROBE=42\n") -> tuple[Path, Path]:
    """A toolkit folder (VERSION only) and its cache with ``env_sh`` (None: not set up)."""
    home, cache_dir = tmp_path / "sonic", tmp_path / "cache"
    home.mkdir()
    (home / "VERSION").write_text("9.9.9-test\n")
    cache_dir.mkdir()
    if env_sh is not None:
        (cache_dir / "env.sh").write_text(env_sh)
    return home, cache_dir


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({}, "HWAAC_SONIC_TOOLKIT is not set: point it at the SONiC toolkit folder"),
        ({"HWAAC_SONIC_TOOLKIT": "/nonexistent/sonic"}, "HWAAC_SONIC_TOOLKIT=/nonexistent/sonic: no such folder"),
    ],
)
def test_locate_says_what_is_missing(environ: dict[str, str], message: str):
    with pytest.raises(st.ToolkitError, match=message):
        st.locate(environ)


def test_a_folder_without_version_is_not_a_toolkit(tmp_path: Path):
    with pytest.raises(st.ToolkitError, match="not a SONiC toolkit folder"):
        st.locate({"HWAAC_SONIC_TOOLKIT": str(tmp_path)})


def test_not_set_up_names_the_setup_command(tmp_path: Path):
    home, cache_dir = _kit(tmp_path, env_sh=None)
    with pytest.raises(st.ToolkitError) as info:
        st.locate({"HWAAC_SONIC_TOOLKIT": str(home), "HWAAC_SONIC_CACHE": str(cache_dir)})
    text = str(info.value)
    assert f"{cache_dir}/env.sh is missing" in text and f"run {home}/setup.sh PYTHON" in text
    assert "scripts/sonic-toolkit.sh" in text


def test_cache_default_follows_xdg_and_the_version(tmp_path: Path):
    home, _ = _kit(tmp_path)
    assert st.default_cache(home, {"XDG_CACHE_HOME": "/x"}) == Path("/x/hwaac-sonic-toolkit/9.9.9-test")
    assert st.default_cache(home, {"HOME": "/h"}) == Path("/h/.cache/hwaac-sonic-toolkit/9.9.9-test")
    assert st.default_cache(home, {"HWAAC_SONIC_CACHE": "/c", "XDG_CACHE_HOME": "/x"}) == Path("/c")


def test_env_sh_is_sourced_by_bash(tmp_path: Path):
    home, cache_dir = _kit(tmp_path, 'export HWAAC_KIT_PROBE="a b"\nexport PATH="/kit/bin:$PATH"\n')
    kit = st.locate({"HWAAC_SONIC_TOOLKIT": str(home), "HWAAC_SONIC_CACHE": str(cache_dir), "PATH": "/usr/bin"})
    assert kit.env["HWAAC_KIT_PROBE"] == "a b" and kit.env["PATH"] == "/kit/bin:/usr/bin"
    assert (kit.home, kit.cache, kit.version) == (home.resolve(), cache_dir, "9.9.9-test")


def test_a_failing_env_sh_is_an_error(tmp_path: Path):
    home, cache_dir = _kit(tmp_path, "echo broken >&2; false\n")
    with pytest.raises(st.ToolkitError, match=r"sourcing .*env.sh failed \(exit 1\): broken"):
        st.locate({"HWAAC_SONIC_TOOLKIT": str(home), "HWAAC_SONIC_CACHE": str(cache_dir)})


# --- with the real toolkit -------------------------------------------------------------------------------------


@cache
def _leaf() -> dict:
    plan = build_plan(load_intent(ROOT / "inventory" / "demo"))
    return render_config_db(plan, plan.switch_by_name["leaf-p0-su01-r0"])


def test_yang_validate_gives_sonic_verdict_per_file(sonic_toolkit: st.Toolkit, tmp_path: Path):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(_leaf()))
    cfg = json.loads(json.dumps(_leaf()))
    cfg["PORT"]["Ethernet0"]["mtu"] = "jumbo"
    cfg["QUEUE"]["Ethernet0|3"]["scheduler"] = "NO_SUCH"
    bad.write_text(json.dumps(cfg))
    res = st.yang_validate([good, bad], toolkit=sonic_toolkit)
    assert [(r.file, r.valid) for r in res] == [(str(good), True), (str(bad), False)]
    errors = {(e.table, e.key, e.field) for e in res[1].errors}
    assert ("PORT", "Ethernet0", "mtu") in errors and ("QUEUE", "Ethernet0|3", "scheduler") in errors
    assert "Invalid leafref value \"NO_SUCH\"" in " ".join(str(e) for e in res[1].errors)
    assert st.yang_validate([], toolkit=sonic_toolkit) == []


def test_yang_validate_refuses_an_unreadable_file(sonic_toolkit: st.Toolkit, tmp_path: Path):
    with pytest.raises(st.ToolkitError, match="sonic-yang-validate"):
        st.yang_validate([tmp_path / "missing.json"], toolkit=sonic_toolkit)


def test_a_tool_that_runs_too_long_is_stopped(sonic_toolkit: st.Toolkit, tmp_path: Path):
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps(_leaf()))
    with pytest.raises(st.ToolkitError, match=r"did not finish within 0\.01 s"):
        st.yang_validate([path], toolkit=sonic_toolkit, timeout=0.01)


def test_gcu_dryrun_accepts_and_returns_the_resulting_config(sonic_toolkit: st.Toolkit):
    running = factory_switch_config(_leaf())
    patch = [
        {"op": "add", "path": "/PORT/Ethernet0/mtu", "value": "9100"},
        {"op": "add", "path": "/PORT/Ethernet0/admin_status", "value": "up"},
    ]
    res = st.gcu_dryrun(running, patch, toolkit=sonic_toolkit)
    assert res.accepted and res.kind is None and res.error is None
    assert res.config is not None and res.config["PORT"]["Ethernet0"]["mtu"] == "9100"
    assert res.config["MGMT_INTERFACE"] == running["MGMT_INTERFACE"] and res.changes


def test_gcu_dryrun_refuses_a_dangling_leafref_with_the_yang_error(sonic_toolkit: st.Toolkit):
    running = factory_switch_config(_leaf())
    res = st.gcu_dryrun(
        running,
        [{"op": "add", "path": "/QUEUE", "value": {"Ethernet0|3": {"scheduler": "NO_SUCH"}}}],
        toolkit=sonic_toolkit,
    )
    assert not res.accepted and res.kind == "yang" and res.config is None
    assert any("QUEUE|Ethernet0|3 scheduler: Invalid leafref value \"NO_SUCH\"" in d for d in res.details)


def test_gcu_needs_device_facts_for_pfc_watchdog_changes(sonic_toolkit: st.Toolkit):
    running = {**factory_switch_config(_leaf()), "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "200"}}}
    patch = [{"op": "replace", "path": "/PFC_WD/GLOBAL/POLL_INTERVAL", "value": "400"}]
    without = st.gcu_dryrun(running, patch, toolkit=sonic_toolkit)
    assert not without.accepted and without.kind == "device"  # sonic_version.yml is read for the ASIC
    with_facts = st.gcu_dryrun(
        running, patch, asic_type="mellanox", build_version="SONiC.202505.01", toolkit=sonic_toolkit
    )
    assert with_facts.accepted, with_facts.error
    assert with_facts.config is not None and with_facts.config["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"] == "400"
