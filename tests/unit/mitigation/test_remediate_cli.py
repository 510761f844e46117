"""``hwaac remediate`` without a twin: findings read from a health report or an Alertmanager webhook payload, the
dry run (nothing written), and bad input refused with exit 2 and what is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hwaac.cli import main as hwaac_main
from hwaac.mitigation.findings import FindingsError, from_alerts, read
from hwaac.plan import build_plan
from hwaac.validate import load_intent

DEMO = Path(__file__).parents[3] / "inventory" / "demo"
ONE_SWEEP = (
    "guard_rails: {}\nrules:\n  - name: r\n    match: {kinds: [link, optic], link_kinds: [leaf_spine]}\n"
    "    action: drain_link\n    persistence: 1\n"
)


def _payload(cable: str, leaf: str, port: str, status: str = "firing") -> dict:
    """An Alertmanager webhook (version 4) as it posts to a receiver, for one hwaac_suspect alert."""
    labels = {
        "alertname": "HwaacFabricSuspect",
        "fabric": "demo",
        "rule": "probe_path_loss",
        "severity": "fault",
        "kind": "link",
        "component": cable,
        "cable": cable,
        "device": "",
        "port": "",
        "hosts": "gpu-su01-h01,gpu-su01-h02,+14 more",
    }
    return {
        "version": "4",
        "groupKey": "{}:{alertname=\"HwaacFabricSuspect\"}",
        "truncatedAlerts": 0,
        "status": status,
        "receiver": "hwaac-remediate",
        "groupLabels": {"alertname": "HwaacFabricSuspect"},
        "commonLabels": labels,
        "commonAnnotations": {},
        "externalURL": "http://localhost:9093",
        "alerts": [
            {
                "status": status,
                "labels": labels,
                "annotations": {"summary": f"{cable} loses probes"},
                "startsAt": "2026-12-05T03:00:00Z",
                "endsAt": "0001-01-01T00:00:00Z",
                "generatorURL": "http://localhost:9090/graph",
                "fingerprint": "a1b2c3d4e5f60718",
            }
        ],
        "_leaf": [leaf, port],
    }


@pytest.fixture(scope="module")
def uplink():
    plan = build_plan(load_intent(DEMO))
    return next(x for x in plan.links if x.kind == "leaf_spine")


def test_an_alert_names_its_cable_and_nodes(uplink):
    found = read(_payload(uplink.cable_id, uplink.a_device, uplink.a_port))
    assert [(f.rule, f.severity, f.cable, f.nodes) for f in found] == [
        ("probe_path_loss", "fault", uplink.cable_id, ("gpu-su01-h01", "gpu-su01-h02"))
    ]
    assert from_alerts(_payload(uplink.cable_id, "", "", status="resolved")) == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"version": "4"}, "suspects: missing"),
        ({"alerts": "x"}, "alerts: missing or not a list"),
        ({"suspects": [{"severity": "bad"}]}, r"suspects\[0\]\.severity: .bad. is not one of info, warn, fault"),
    ],
)
def test_input_that_is_neither_is_refused(data, message):
    with pytest.raises(FindingsError, match=message):
        read(data)


def test_a_dry_run_says_what_it_would_do_and_writes_nothing(uplink, tmp_path, capsys):
    (tmp_path / "alert.json").write_text(json.dumps(_payload(uplink.cable_id, uplink.a_device, uplink.a_port)))
    (tmp_path / "policy.yaml").write_text(ONE_SWEEP)
    code = hwaac_main(
        [
            "remediate",
            str(DEMO),
            str(tmp_path / "alert.json"),
            "--state",
            str(tmp_path / "state"),
            "--policy",
            str(tmp_path / "policy.yaml"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert f"ACT    drain_link {uplink.cable_id}: ok" in out
    for device in (uplink.a_device, uplink.b_device):
        assert f"would graceful {device}: ROUTE_MAP_SET 1, ROUTE_MAP 1, BGP_NEIGHBOR_AF 1" in out
        assert f"would shut     {device}: BGP_NEIGHBOR 1" in out
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--apply"], "--apply needs where to carry out"),
        (["--now", "yesterday"], "--now: 'yesterday' is not an ISO 8601 time"),
        (["--now", "2026-12-05T03:00:00"], "has no time zone"),
        (["--policy", "{dir}/nope.yaml"], "--policy: "),
        (["--policy", "{dir}/bad.yaml"], "bad.yaml:1: graceful_s: invalid value (got -1)"),
    ],
)
def test_bad_input_exits_2_naming_it(uplink, tmp_path, capsys, args, message):
    (tmp_path / "alert.json").write_text(json.dumps(_payload(uplink.cable_id, "", "")))
    (tmp_path / "bad.yaml").write_text("graceful_s: -1\nrules: []\n")
    argv = ["remediate", str(DEMO), str(tmp_path / "alert.json"), "--state", str(tmp_path / "state")]
    code = hwaac_main(argv + [a.replace("{dir}", str(tmp_path)) for a in args])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "state").exists()


def test_unreadable_findings_exit_2(tmp_path, capsys):
    (tmp_path / "f.json").write_text("{not json")
    assert hwaac_main(["remediate", str(DEMO), str(tmp_path / "f.json"), "--state", str(tmp_path / "s")]) == 2
    assert "f.json" in capsys.readouterr().err


def test_apply_with_netbox_unreachable_exits_2_before_any_switch(uplink, tmp_path, capsys, monkeypatch):
    from hwaac.mitigation import carry_out

    monkeypatch.setenv("NETBOX_URL", "http://127.0.0.1:9")  # nothing listens on the discard port
    monkeypatch.setenv("NETBOX_TOKEN", "nbt_k3y.s3cret-token-value")
    monkeypatch.setattr(carry_out, "run", lambda *a, **k: pytest.fail("carried out without NetBox"))
    (tmp_path / "alert.json").write_text(json.dumps(_payload(uplink.cable_id, uplink.a_device, uplink.a_port)))
    (tmp_path / "policy.yaml").write_text(ONE_SWEEP)
    code = hwaac_main(
        [
            "remediate",
            str(DEMO),
            str(tmp_path / "alert.json"),
            "--state",
            str(tmp_path / "state"),
            "--policy",
            str(tmp_path / "policy.yaml"),
            "--apply",
            "-i",
            "inv.yml",
            "--netbox",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "--netbox: NetBox at http://127.0.0.1:9 is unreachable" in err and "s3cret" not in err
    assert not (tmp_path / "state").exists()


class _Alertmanager:
    """Alertmanager's ``GET /api/v2/alerts`` answering with ``self.alerts`` (API alerts), counting the reads."""

    def __init__(self) -> None:
        import http.server
        import threading

        self.alerts: list[dict] = []
        self.reads = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.reads += 1
                body = json.dumps(outer.alerts).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def firing(self, cable: str) -> None:
        alert = _payload(cable, "", "")["alerts"][0]
        self.alerts = [{**alert, "status": {"state": "active", "silencedBy": [], "inhibitedBy": []}}]


@pytest.fixture
def alertmanager():
    am = _Alertmanager()
    yield am
    am.server.shutdown()


def _sweep(tmp_path: Path, url: str) -> list[str]:
    (tmp_path / "policy.yaml").write_text(ONE_SWEEP)
    return [
        "remediate",
        str(DEMO),
        "--alertmanager",
        url,
        "--state",
        str(tmp_path / "state"),
        "--policy",
        str(tmp_path / "policy.yaml"),
        "--apply",
        "-i",
        "inv.yml",
        "--format",
        "json",
    ]


def test_a_sweep_marks_its_start_and_reads_the_alerts_active_when_it_has_the_state(
    uplink, tmp_path, capsys, switches, alertmanager
):
    import fcntl
    import threading
    import time

    from hwaac.mitigation.engine import STARTED

    (tmp_path / "state").mkdir()
    codes: list[int] = []
    asked = time.time()
    with open(tmp_path / "state" / ".lock", "w") as running:  # a sweep runs
        fcntl.flock(running, fcntl.LOCK_EX)
        waiter = threading.Thread(target=lambda: codes.append(hwaac_main(_sweep(tmp_path, alertmanager.url))))
        waiter.start()
        for _ in range(100):  # until the waiting sweep says it has started
            if (tmp_path / "state" / STARTED).exists():
                break
            time.sleep(0.05)
        assert waiter.is_alive() and alertmanager.reads == 0  # it waits for the state before reading alerts
        assert float((tmp_path / "state" / STARTED).read_text()) >= asked
        alertmanager.firing(uplink.cable_id)  # the fault came while it waited
    waiter.join(30)
    out = json.loads(capsys.readouterr().out)
    assert codes == [0] and alertmanager.reads == 1
    assert [(d["action"], d["target"], d["allowed"]) for d in out["decisions"]] == [
        ("drain_link", uplink.cable_id, True)
    ]
    assert len(switches.runs) == 1
