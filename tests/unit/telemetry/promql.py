"""Unit tests of the shipped Prometheus rules under the real promtool: the exporter's samples as input series, and
one ``promtool test rules`` run of a list of PromQL checks (test_prometheus.py, test_dashboard.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

PROMETHEUS = Path(__file__).parents[3] / "files" / "prometheus"
# the network health rules: the recorded SLIs, then the alerts that read them
RULES = [PROMETHEUS / "hwaac-network-sli.rules.yml", PROMETHEUS / "hwaac-network-alerts.rules.yml"]


def series(name: str, labels: dict[str, str], v: float) -> dict[str, str]:
    """One input series: its labels that have a value, sorted; the value held for five minutes."""
    sel = ",".join(f'{k}="{x}"' for k, x in sorted(labels.items()) if x)
    return {"series": f"{name}{{{sel}}}", "values": f"{v!r}+0x5"}


def family_series(fams: Iterable[Any], prefixes: tuple[str, ...]) -> list[dict[str, str]]:
    """The input series of every sample of the exporter's families whose name starts with one of ``prefixes``."""
    return [
        series(fam.name, smp.labels, smp.value) for fam in fams if fam.name.startswith(prefixes) for smp in fam.samples
    ]


def promtool_test(tmp_path: Path, promtool: str, inputs: list[dict], checks: list[dict]) -> None:
    """Run ``checks`` (promql_expr_test items) over ``inputs`` with the shipped rules; fail with promtool's words."""
    doc = {
        "rule_files": [str(r) for r in RULES],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": inputs, "promql_expr_test": checks}],
    }
    test = tmp_path / "rules.test.yml"
    test.write_text(yaml.safe_dump(doc, sort_keys=False))
    r = subprocess.run([promtool, "test", "rules", str(test)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
