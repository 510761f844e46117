"""The closed mitigation loop on a twin, real parts only: sweeps of the lab (the switches' counters and every host's
probes) read by ``hwaac health exporter``, scraped by Prometheus with hwaac's mitigation alert, routed by Alertmanager
to ansible-rulebook, whose rulebook runs ``playbooks/remediate.yml`` (``hwaac remediate --alertmanager URL --apply
--lab NAME``). Each process leads its own process group, recorded in the lab folder (``loop.json``), so that
``hwaac lab down`` stops them whatever happened. How it is timed: ``docs/mitigation.md`` "The closed loop".
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hwaac.fileio import symlink_atomic
from hwaac.lab.api import Lab
from hwaac.lab.errors import LabError
from hwaac.lab.probe import probe_lab
from hwaac.lab.procs import alive, ident, stop
from hwaac.lab.sweep import write_sweep
from hwaac.plan.model import Plan

REPO = Path(__file__).resolve().parents[3]
RULES = REPO / "files" / "prometheus" / "hwaac-mitigation.rules.yml"
ROUTE = REPO / "files" / "alertmanager" / "hwaac-remediate.yml"
RULEBOOK = REPO / "extensions" / "eda" / "rulebooks" / "hwaac_remediate.yml"
RECORD = "loop.json"
LOOP_DIR = "loop"  # in the lab folder: configs, logs, sweeps, the mitigation state
ALERT = "HwaacMitigate"
TWIN_POLICY = """# the twin's policy: act on the first sweep, a short hold-down, one clean sweep to come back
guard_rails: {min_leaf_uplinks: 2, min_plane_spines: 2, max_actions: 2, breaker_actions: 6, window_s: 600}
graceful_s: 2
rules:
  - name: lossy-fabric-link
    match: {kinds: [cable, optic, port, link], severity: fault, link_kinds: [leaf_spine, spine_super_spine]}
    action: drain_link
    persistence: 1
    hold_down_s: 20
    recheck_sweeps: 1
"""


@dataclass
class Settings:
    """How fast the loop turns: probes per sweep and how often a sweep starts, the exporter's re-read, Prometheus'
    scrape and evaluation, the rulebook's tick, and the policy (default: :data:`TWIN_POLICY`)."""

    probe_count: int = 50
    round_s: float = 8.0  # a sweep starts at most this often, as a prober's interval (back to back, it takes a core)
    # the sweeps' thread and the exporter run at this nice value: on a fabric, probers and exporter run on the hosts
    # and a monitoring server, not on the controller that carries out the drains (docs/mitigation.md)
    monitor_nice: int = 10
    probe_sports: int = 2
    probe_timeout_s: float = 0.5  # the twin answers in well under a millisecond
    exporter_interval_s: float = 1.0
    scrape_s: float = 2.0  # also the scrape timeout: an exporter busy assessing a sweep still answers in time
    tick_s: float = 30.0
    policy: str = TWIN_POLICY
    start_timeout_s: float = 120.0
    netbox: tuple[str, str] | None = None  # (URL, token): the sweeps record what they do there (--netbox)


@dataclass
class Round:
    """One sweep of the loop: when its probes ran, the host pairs with no reply, the probes sent and lost."""

    started: float
    ended: float
    cut: list[tuple[str, str]] = field(default_factory=list)
    sent: int = 0
    lost: int = 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tool(name: str) -> str:
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if not found:
        raise LabError(f"{name} not found: the closed loop needs it (make test installs it)")
    return found


class Loop:
    """The running loop: start it with ``with Loop(...) as loop``; it stops everything on the way out."""

    def __init__(
        self,
        lab: Lab,
        plan: Plan,
        intent: Path,
        settings: Settings | None = None,
        log: Callable[[str], None] = lambda _: None,
    ) -> None:
        self.lab, self.plan, self.intent = lab, plan, Path(intent)
        self.work = lab.folder / LOOP_DIR
        self.settings = settings or Settings()
        self.log = log
        self.ports = {k: free_port() for k in ("exporter", "prometheus", "alertmanager", "webhook")}
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.rounds: list[Round] = []
        self.state = self.work / "state"
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None
        self._sweep_error: BaseException | None = None

    # ------------------------------------------------------------------------------------------------ sweeps
    def _probe_round(self, n: int) -> None:
        s = self.settings
        started = time.time()
        results = probe_lab(
            self.lab, self.plan, count=s.probe_count, peers=1, sports=s.probe_sports, timeout=s.probe_timeout_s
        )
        ended = time.time()
        flows = [f for r in results.values() for f in r.flows]
        self.rounds.append(
            Round(
                started,
                ended,
                [(f.flow.src_host, f.flow.dst_host) for f in flows if f.received_back == 0],
                sum(f.sent for f in flows),
                sum(f.sent - f.received_back for f in flows),
            )
        )
        folder = self.work / "sweeps" / f"{n:05d}"
        write_sweep(self.lab, folder, probes=results)
        for name, target in (("prev", self.work / "cur"), ("cur", folder)):
            symlink_atomic(self.work / name, target.resolve() if target.is_symlink() else target)
        for old in sorted((self.work / "sweeps").iterdir())[:-3]:
            shutil.rmtree(old, ignore_errors=True)

    def _sweep_forever(self, first: int) -> None:
        n = first
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.settings.monitor_nice)  # this thread
            while not self._stop.is_set():
                started = time.monotonic()
                self._probe_round(n)
                n += 1
                self._stop.wait(self.settings.round_s - (time.monotonic() - started))
        except BaseException as exc:  # reported by check()
            self._sweep_error = exc

    def check(self) -> None:
        """Raise what stopped the loop: a sweep that failed, or a process that exited."""
        if self._sweep_error is not None:
            raise LabError(f"the loop's sweeps stopped: {self._sweep_error}")
        for name, p in self.procs.items():
            if p.poll() is not None:
                tail = (self.work / f"{name}.log").read_text(errors="replace")[-2000:]
                raise LabError(f"the loop's {name} exited with {p.returncode}:\n{tail}")

    # --------------------------------------------------------------------------------------------- processes
    def _spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        logf = open(self.work / f"{name}.log", "wb")  # noqa: SIM115 (kept open for the process' life)
        p = subprocess.Popen(
            argv, cwd=self.work, stdout=logf, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        logf.close()
        self.procs[name] = p
        rec = {name: {**ident(p.pid), "group": 1} for name, p in self.procs.items()}
        (self.lab.folder / RECORD).write_text(json.dumps(rec))

    def _configs(self) -> dict[str, Path]:
        s, ports = self.settings, self.ports
        prom = {
            "global": {"scrape_interval": f"{s.scrape_s:g}s", "evaluation_interval": f"{s.scrape_s:g}s"},
            "rule_files": [str(RULES)],
            "alerting": {"alertmanagers": [{"static_configs": [{"targets": [f"127.0.0.1:{ports['alertmanager']}"]}]}]},
            "scrape_configs": [
                {"job_name": "hwaac", "static_configs": [{"targets": [f"127.0.0.1:{ports['exporter']}"]}]}
            ],
        }
        route = yaml.safe_load(ROUTE.read_text())
        for r in route["receivers"]:
            for hook in r.get("webhook_configs", []):
                hook["url"] = f"http://127.0.0.1:{ports['webhook']}/alertmanager"
        hwaac = str(Path(sys.executable).parent / "hwaac")
        variables = {
            "remediate_webhook_port": ports["webhook"],
            "remediate_tick_s": s.tick_s,
            "remediate_state": str(self.state),
        }
        playbook = {
            "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable,
            "remediate_intent": str(self.intent),
            "remediate_lab": self.lab.name,
            "remediate_alertmanager": f"http://127.0.0.1:{ports['alertmanager']}",
            "remediate_state": str(self.state),
            "remediate_policy": str(self.work / "policy.yaml"),
            "remediate_hwaac": hwaac,
            "remediate_netbox": s.netbox is not None,
        }
        files = {
            "prometheus.yml": prom,
            "alertmanager.yml": route,
            "vars.yml": variables,
            "inventory.yml": {"all": {"hosts": {"localhost": playbook}}},
        }
        out = {}
        for name, doc in files.items():
            out[name] = self.work / name
            out[name].write_text(yaml.safe_dump(doc, sort_keys=False))
        (self.work / "policy.yaml").write_text(s.policy)
        return out

    def start(self) -> Loop:
        stop_recorded(self.lab)  # a loop a killed run left
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir(parents=True)
        (self.work / "sweeps").mkdir(exist_ok=True)
        cfg = self._configs()
        self.log("loop: two first sweeps")
        self._probe_round(0)
        self._probe_round(1)
        netbox = (
            {"NETBOX_URL": self.settings.netbox[0], "NETBOX_TOKEN": self.settings.netbox[1]}
            if self.settings.netbox
            else {}
        )
        env = {
            **os.environ,
            **netbox,
            "ANSIBLE_COLLECTIONS_PATH": str(REPO),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_LOCALHOST_WARNING": "0",
            "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
            "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        }
        p = self.ports
        self._spawn(
            "exporter",
            [
                "nice",
                "-n",
                str(self.settings.monitor_nice),
                str(Path(sys.executable).parent / "hwaac"),
                "health",
                "exporter",
                str(self.intent),
                "--samples",
                str(self.work / "prev"),
                "--samples",
                str(self.work / "cur"),
                "--port",
                str(p["exporter"]),
                "--interval",
                f"{self.settings.exporter_interval_s:g}",
            ],
        )
        self._spawn(
            "alertmanager",
            [
                _tool("prometheus-alertmanager"),
                f"--config.file={cfg['alertmanager.yml']}",
                f"--storage.path={self.work / 'alertmanager'}",
                "--cluster.listen-address=",
                f"--web.listen-address=127.0.0.1:{p['alertmanager']}",
            ],
        )
        self._spawn(
            "prometheus",
            [
                _tool("prometheus"),
                f"--config.file={cfg['prometheus.yml']}",
                f"--storage.tsdb.path={self.work / 'prometheus'}",
                f"--web.listen-address=127.0.0.1:{p['prometheus']}",
            ],
        )
        self._spawn(
            "rulebook",
            [
                _tool("ansible-rulebook"),
                "--rulebook",
                str(RULEBOOK),
                "-i",
                str(cfg["inventory.yml"]),
                "--vars",
                str(cfg["vars.yml"]),
            ],
            env=env,
        )
        self._wait_ready()
        self._sweeper = threading.Thread(target=self._sweep_forever, args=(2,), daemon=True)
        self._sweeper.start()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.settings.start_timeout_s
        ready = {
            "exporter": f"http://127.0.0.1:{self.ports['exporter']}/metrics",
            "prometheus": f"http://127.0.0.1:{self.ports['prometheus']}/-/ready",
            "alertmanager": f"http://127.0.0.1:{self.ports['alertmanager']}/-/ready",
        }
        while ready:
            self.check()
            for name, url in list(ready.items()):
                with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        del ready[name]
            if ready and time.monotonic() > deadline:
                raise LabError(f"the loop's {', '.join(ready)} did not come up in {self.settings.start_timeout_s} s")
            time.sleep(0.2)
        while True:  # the rulebook listens once its rule engine (Java) is up
            self.check()
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.ports["webhook"]), 1):
                return
            if time.monotonic() > deadline:
                raise LabError(f"the rulebook did not listen in {self.settings.start_timeout_s} s")
            time.sleep(0.2)

    def stop(self) -> None:
        self._stop.set()
        if self._sweeper is not None:
            self._sweeper.join(timeout=120)
        stop_recorded(self.lab)
        self.procs.clear()

    def __enter__(self) -> Loop:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---------------------------------------------------------------------------------------------- readings
    def alerts(self) -> list[dict[str, Any]]:
        """The HwaacMitigate alerts Alertmanager holds now."""
        url = f"http://127.0.0.1:{self.ports['alertmanager']}/api/v2/alerts?active=true"
        with urllib.request.urlopen(url, timeout=5) as resp:
            return [a for a in json.loads(resp.read()) if a.get("labels", {}).get("alertname") == ALERT]

    def decisions(self) -> list[dict[str, Any]]:
        path = self.state / "decisions.jsonl"
        return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []

    def wait(self, what: Callable[[], Any], timeout: float, poll: float = 0.2, *, name: str = "") -> tuple[Any, float]:
        """Poll ``what`` until it returns something true; (that, the time it did). On a timeout the error names
        ``name`` and what the loop holds: the alerts, the last decisions and probe rounds."""
        deadline = time.monotonic() + timeout
        while True:
            self.check()
            got = what()
            if got:
                return got, time.time()
            if time.monotonic() > deadline:
                alerts = [
                    {k: a["labels"].get(k, "") for k in ("rule", "kind", "component", "cable")} for a in self.alerts()
                ]
                last = [(d["action"], d["target"], d["rule"], d.get("outcome", "")) for d in self.decisions()[-4:]]
                rounds = [(r.sent, r.lost, len(r.cut)) for r in self.rounds[-4:]]
                raise LabError(
                    f"not within {timeout} s: {name or what}; alerts {alerts}; last decisions {last}; "
                    f"last probe rounds (sent, lost, pairs cut) {rounds}"
                )
            time.sleep(poll)


def stop_recorded(lab: Lab) -> int:
    """Stop the loop processes recorded for ``lab`` (each with its process group); the number stopped."""
    path = lab.folder / RECORD
    try:
        recs = list(json.loads(path.read_text()).values())
    except (OSError, ValueError):
        return 0
    live = [r for r in recs if alive(r)]
    stop(live, sig=signal.SIGTERM, timeout=5.0)
    stop([r for r in live if alive(r)], sig=signal.SIGKILL, timeout=2.0)
    # a playbook the rulebook started runs in a session of its own (ansible-runner's pty): find it by the
    # loop's folder on its command line
    marks = [str(lab.folder / LOOP_DIR).encode(), str(lab.folder / "mitigation").encode()]
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            with contextlib.suppress(OSError):
                line = (proc / "cmdline").read_bytes()
                if any(m in line for m in marks):
                    os.kill(int(proc.name), signal.SIGKILL)
    path.unlink(missing_ok=True)
    return len(live)


__all__ = ["ALERT", "TWIN_POLICY", "Loop", "Round", "Settings", "stop_recorded"]
