"""The closed loop's shipped files, judged by the real tools: the rulebook against ansible-rulebook's own schema,
the Alertmanager route by amtool, the event source plugin serving a real webhook delivery; the Prometheus rule is
promtool's (tests/prometheus/mitigation.test.yml)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import urllib.request
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.unit.mitigation.test_remediate_cli import _payload

ROOT = Path(__file__).parents[3]
RULEBOOK = ROOT / "extensions" / "eda" / "rulebooks" / "hwaac_remediate.yml"
ROUTE = ROOT / "files" / "alertmanager" / "hwaac-remediate.yml"
PLUGIN = ROOT / "extensions" / "eda" / "plugins" / "event_source" / "alertmanager.py"


def test_the_rulebook_is_valid_for_ansible_rulebook() -> None:
    from importlib.resources import files

    schema = json.loads(files("ansible_rulebook").joinpath("schema", "ruleset_schema.json").read_text())
    rulebook = yaml.safe_load(RULEBOOK.read_text())
    jsonschema.validate(rulebook, schema)
    (ruleset,) = rulebook
    assert ruleset["execution_strategy"] == "sequential"  # sweeps never interleave
    (source,) = ruleset["sources"]  # given the state folder, the source keeps at most one sweep waiting
    assert source["aiinfra.hwaac.alertmanager"]["state"] == "{{ remediate_state | default('') }}"
    assert {r["action"]["run_playbook"]["name"] for r in ruleset["rules"]} == {"aiinfra.hwaac.remediate"}
    assert (ROOT / "playbooks" / "remediate.yml").is_file()


def test_the_route_passes_amtool() -> None:
    amtool = shutil.which("amtool")
    assert amtool, "amtool (Debian prometheus-alertmanager) is missing: make test installs it"
    r = subprocess.run([amtool, "check-config", str(ROUTE)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    route = yaml.safe_load(ROUTE.read_text())
    (sub,) = route["route"]["routes"]
    assert sub["matchers"] == ['alertname = "HwaacMitigate"']
    assert sub["group_by"] == ["alertname", "fabric", "component"]  # a new suspect is delivered after group_wait
    (hook,) = next(r for r in route["receivers"] if r["name"] == sub["receiver"])["webhook_configs"]
    assert hook["send_resolved"] is True


def _plugin():
    import importlib.util

    spec = importlib.util.spec_from_file_location("hwaac_eda_alertmanager", PLUGIN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _post(req: urllib.request.Request) -> int:
    with urllib.request.urlopen(req, timeout=2) as resp:
        return resp.status


def test_a_delivery_becomes_one_event_and_the_tick_ticks(tmp_path: Path) -> None:
    mod = _plugin()
    with __import__("socket").socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    payload = _payload("L0000064", "", "")

    async def run() -> list[dict]:
        queue: asyncio.Queue = asyncio.Queue()
        task = asyncio.create_task(mod.main(queue, {"host": "127.0.0.1", "port": port, "tick_s": 0.3}))
        for _ in range(100):  # until it listens
            await asyncio.sleep(0.05)
            try:
                req = urllib.request.Request(
                    f"http://127.0.0.1:{port}/alertmanager",
                    data=json.dumps(payload).encode(),
                    method="POST",
                    headers={"Content-Type": "application/json"},
                )
                status = await asyncio.to_thread(_post, req)
                break
            except OSError:
                continue
        assert status == 202
        events = [await asyncio.wait_for(queue.get(), 5) for _ in range(2)]
        task.cancel()
        return events

    events = asyncio.run(run())
    delivery = next(e["hwaac_alerts"] for e in events if "hwaac_alerts" in e)
    assert delivery["status"] == "firing" and delivery["firing"] == 1 and delivery["resolved"] == 0
    assert delivery["alerts"][0]["cable"] == "L0000064"
    assert any("hwaac_tick" in e for e in events)


def test_a_delivery_is_answered_at_once_when_an_event_already_waits() -> None:
    mod = _plugin()
    with __import__("socket").socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    payload = _payload("L0000064", "", "")

    async def run() -> tuple[list[int], list[dict]]:
        queue: asyncio.Queue = asyncio.Queue(1)  # as ansible-rulebook makes a ruleset's source queue
        task = asyncio.create_task(mod.main(queue, {"host": "127.0.0.1", "port": port, "tick_s": 0}))
        statuses = []
        for _ in range(100):  # until it listens, then twice more with the queue full
            await asyncio.sleep(0.05)
            try:
                req = urllib.request.Request(
                    f"http://127.0.0.1:{port}/alertmanager",
                    data=json.dumps(payload).encode(),
                    method="POST",
                    headers={"Content-Type": "application/json"},
                )
                statuses.append(await asyncio.to_thread(_post, req))
            except urllib.error.URLError:  # not listening yet (a delivery left waiting times out: the test fails)
                continue
            if len(statuses) == 3:
                break
        events = [queue.get_nowait() for _ in range(queue.qsize())]
        task.cancel()
        return statuses, events

    statuses, events = asyncio.run(run())
    assert statuses == [202, 202, 202]  # none waited for the queue (urlopen gives up after 2 s)
    assert len(events) == 1 and "hwaac_alerts" in events[0]


# (seconds since the last event was put, what sweep-started holds relative to that event or None for no file,
#  whether the next event is dropped)
PENDING = [
    pytest.param(None, None, False, id="first event"),
    pytest.param(1.0, None, True, id="its sweep has not started: no marker yet"),
    pytest.param(1.0, -5.0, True, id="its sweep has not started: the marker is an older sweep's"),
    pytest.param(1.0, +0.5, False, id="its sweep started: it may have read the alerts already"),
    pytest.param(119.0, -5.0, True, id="still pending just before pending_s"),
    pytest.param(121.0, -5.0, False, id="pending_s passed: the sweep never started"),
    pytest.param(1.0, "junk", True, id="an unreadable marker is no start"),
]


@pytest.mark.parametrize(("since", "marker", "dropped"), PENDING)
def test_an_event_is_dropped_while_the_sweep_it_would_join_has_not_started(tmp_path, since, marker, dropped):
    import time

    from hwaac.mitigation.engine import STARTED

    mod = _plugin()
    assert mod.STARTED == STARTED  # the source reads what hwaac remediate writes
    pending = mod.Pending(str(tmp_path), 120)
    now = time.time()
    if since is not None:
        pending.put_at = now - since
    if marker is not None:
        (tmp_path / STARTED).write_text(marker if isinstance(marker, str) else f"{pending.put_at + marker}\n")
    queue: asyncio.Queue = asyncio.Queue(1)
    assert pending.offer(queue, {"hwaac_tick": {}}) is not dropped
    assert queue.qsize() == (0 if dropped else 1)
    assert mod.Pending("", 120).offer(asyncio.Queue(1), {"hwaac_tick": {}})  # without the state folder: always


@pytest.mark.parametrize(
    ("payload", "firing"),
    [
        ({"status": "resolved", "alerts": [{"status": "resolved", "labels": {"alertname": "HwaacMitigate"}}]}, 0),
        ({"status": "firing", "alerts": [{"status": "firing", "labels": {}}, "junk"]}, 1),
        ({}, 0),
    ],
)
def test_summary_counts_what_the_delivery_holds(payload: dict, firing: int) -> None:
    assert _plugin().summary(payload)["firing"] == firing
