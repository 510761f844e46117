"""The switches as ``hwaac remediate --apply`` reaches them, stubbed at the playbook run: each run's stages and
re-check are recorded, and each re-check ping answers with a recorded iputils output (clean unless a test names a
cable's answer)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hwaac.mitigation import carry_out

PINGS = Path(__file__).parents[2] / "fixtures" / "mitigation" / "recheck"


def ping_result(item: dict[str, str], answer: str) -> dict[str, Any]:
    """What ``playbooks/mitigate.yml`` keeps of one re-check ping (a registered loop result) answering as the
    recorded ``answer`` (clean, lossy, dead, nosrc) did."""
    rec = json.loads((PINGS / f"{answer}.json").read_text())
    return {
        "item": item,
        "cmd": rec["argv"],
        "rc": rec["rc"],
        "stdout": rec["stdout"],
        "stderr": rec["stderr"],
        "changed": False,
        "failed": False,
    }


class Switches:
    """Each run: ``stage1``/``stage2`` ({switch: stages' tables}), ``pause_s``, ``save`` and ``recheck`` (cables
    pinged); ``answers``: cable -> recorded ping output (default clean); ``rc``: what every run returns."""

    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []
        self.answers: dict[str, str] = {}
        self.rc = 0

    def __call__(self, where: carry_out.Where, extra: dict[str, Any], log: Any) -> tuple[int, str]:
        pinged = [i for items in extra["mitigate_recheck"].values() for i in items]
        self.runs.append(
            {
                "stage1": extra["mitigate_stage1"],
                "stage2": extra["mitigate_stage2"],
                "pause_s": extra["mitigate_pause_s"],
                "save": extra["mitigate_save"],
                "recheck": sorted(i["cable"] for i in pinged),
            }
        )
        folder = Path(extra["mitigate_recheck_dir"])
        for device, items in extra["mitigate_recheck"].items():
            results = [ping_result(i, self.answers.get(i["cable"], "clean")) for i in items]
            (folder / f"{device}.json").write_text(json.dumps(results))
        return self.rc, str(where.work / "run.log")


@pytest.fixture
def switches(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Switches:
    sw = Switches()
    monkeypatch.setattr(carry_out, "run", sw)
    return sw
