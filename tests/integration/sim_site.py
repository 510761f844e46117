"""The simulated demo site of ``scripts/site-demo.sh`` in a folder of its own: the demo rendered, every host's
simulated hardware (``tests.fakes.simulate``) and an inventory like ``inventory/demo/simulated`` (the collection's
inventory plugin over the render, the same group_vars) whose paths point into that folder instead of the checkout's
``build/``."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from hwaac.plan import build_plan
from hwaac.render import render_to_dir
from hwaac.validate import load_intent
from tests.fakes.simulate import factory_switch_config, simulate

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "inventory" / "demo"
SIMULATED = DEMO / "simulated"


@dataclass(frozen=True)
class SimSite:
    """``inventory``: the inventory folder; ``sim``: the hosts' folders; ``extra_vars``: the ``-e`` values that point
    the group_vars at ``sim`` (their defaults name the checkout's build/sim)."""

    root: Path
    render: Path
    sim: Path
    inventory: Path
    switches: tuple[str, ...] = ()

    @property
    def extra_vars(self) -> list[str]:
        return [f"hwaac_repo={REPO}", f"hwaac_sim_host={self.sim}/{{{{ inventory_hostname }}}}"]

    def reset(self) -> None:
        """Every simulated host back to its factory state (only ``switches`` when the site was made for them)."""
        if not self.switches:
            simulate(self.render, self.sim, reset=True)
            return
        for name in self.switches:  # what simulate() makes of a switch, for these alone
            state = self.sim / name / "state"
            shutil.rmtree(state.parent, ignore_errors=True)
            state.mkdir(parents=True)
            cfg = json.loads((self.render / "switches" / name / "config_db.json").read_text())
            (state / "config_db.json").write_text(json.dumps(factory_switch_config(cfg), indent=2, sort_keys=True))


def render_demo(folder: Path) -> Path:
    """The demo fabric as ``hwaac plan inventory/demo -o FOLDER`` renders it."""
    render_to_dir(build_plan(load_intent(DEMO)), folder)
    return folder


def sim_site(root: Path, render: Path | None = None, switches: tuple[str, ...] = ()) -> SimSite:
    """A simulated demo site under ``root`` (the render reused when given); with ``switches``, only those switches
    are simulated (a test that limits its runs to them saves simulating the other 86 hosts)."""
    render = render or render_demo(root / "render")
    sim = root / "sim"
    inventory = root / "inventory"
    (inventory / "group_vars").mkdir(parents=True)
    shutil.copy(SIMULATED / "group_vars" / "all.yml", inventory / "group_vars" / "all.yml")
    plugin = {"plugin": "aiinfra.hwaac.fabric", "source": "plan", "plan_file": str(render), "render_dir": str(render)}
    (inventory / "demo.hwaac.yml").write_text(json.dumps(plugin, indent=1) + "\n")
    site = SimSite(root=root, render=render, sim=sim, inventory=inventory, switches=switches)
    site.reset()
    return site
