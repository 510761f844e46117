"""Batches and hosts of a playbook run, from its ansible-runner events (the ``job_events`` of the artifacts).

Each ``serial`` batch of a play starts with a ``playbook_on_play_start`` event (ansible-runner's callback gives a
repeated play the uuid ``<play uuid>_<n>``), followed by the ``hwaac-batch`` line of the callback plugin
``hwaac_batches`` (batch n of N and its hosts); the task results of the batch carry its uuid as ``play_uuid``.
The per-host recap is ansible's own (``playbook_on_stats``) when the run got that far.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

MARKER = "hwaac-batch "  # hwaac.deploy.callback.hwaac_batches.MARKER (that module imports ansible)
TASK_STARTS = ("playbook_on_task_start", "playbook_on_handler_task_start")
RESULTS = {
    "runner_on_ok": "ok",
    "runner_on_async_ok": "ok",
    "runner_on_failed": "failed",
    "runner_on_async_failed": "failed",
    "runner_on_skipped": "skipped",
    "runner_on_unreachable": "unreachable",
}
# playbook_on_stats keys -> the recap's names (ansible's PLAY RECAP calls "dark" unreachable, "failures" failed)
STATS = {
    "ok": "ok",
    "changed": "changed",
    "failures": "failed",
    "dark": "unreachable",
    "skipped": "skipped",
    "rescued": "rescued",
    "ignored": "ignored",
}


@dataclass
class Batch:
    """One ``serial`` batch of a play: number ``number`` of ``of`` (None when the run did not say), its hosts, the
    tasks started in it and the task results, by kind."""

    play: str
    number: int
    of: int | None = None
    hosts: list[str] = field(default_factory=list)
    tasks: int = 0
    task: str = ""
    ok: int = 0
    changed: int = 0
    failed: int = 0
    unreachable: int = 0
    skipped: int = 0
    ignored: int = 0
    changed_hosts: list[str] = field(default_factory=list)
    failed_hosts: list[str] = field(default_factory=list)
    unreachable_hosts: list[str] = field(default_factory=list)
    announced: bool = False
    finished: bool = False

    @property
    def label(self) -> str:
        return f"{self.number}/{self.of if self.of is not None else '?'}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "play": self.play,
            "batch": self.number,
            "of": self.of,
            "hosts": self.hosts,
            "tasks": self.tasks,
            "ok": self.ok,
            "changed": self.changed,
            "failed": self.failed,
            "unreachable": self.unreachable,
            "skipped": self.skipped,
            "ignored": self.ignored,
            "changed_hosts": self.changed_hosts,
            "failed_hosts": self.failed_hosts,
            "unreachable_hosts": self.unreachable_hosts,
        }


@dataclass
class Play:
    """One play: its batches as they ran, the number planned and the hosts it targets (from ``hwaac-batch``)."""

    name: str
    uuid: str
    pattern: str
    batches: list[Batch] = field(default_factory=list)
    planned: int | None = None
    hosts: list[str] | None = None
    no_hosts: bool = False

    @property
    def not_started(self) -> list[str]:
        """Hosts of the play that no batch took (the rollout stopped first); [] when the hosts are not known."""
        started = {h for b in self.batches for h in b.hosts}
        return [h for h in self.hosts or [] if h not in started]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "pattern": self.pattern,
            "hosts": self.hosts,
            "batches_planned": self.planned,
            "batches_run": len(self.batches),
            "no_hosts_matched": self.no_hosts,
            "not_started": self.not_started,
        }


@dataclass(frozen=True)
class Note:
    """What an event changed, for a display: ``play`` (a play started), ``batch`` (a batch's hosts known),
    ``task``, ``failed`` / ``unreachable`` (a host, with the task and message), ``done`` (a batch finished),
    ``no_hosts`` (a play matched no host), ``stats`` (ansible's recap arrived)."""

    kind: str
    batch: Batch | None = None
    play: Play | None = None
    host: str = ""
    task: str = ""
    message: str = ""


def _message(res: dict[str, Any]) -> str:
    msg = res.get("msg") or res.get("stderr") or res.get("reason") or ""
    return " ".join(str(msg).split())[:300]


class Accounting:
    """Feed it the events of one run in order (:meth:`feed`); it keeps plays, batches and the host recap."""

    def __init__(self) -> None:
        self.plays: list[Play] = []
        self.stats: dict[str, dict[str, int]] | None = None
        self.events = 0
        self._batches: dict[str, tuple[Play, Batch]] = {}
        self._current: tuple[Play, Batch] | None = None
        self._counts: dict[str, dict[str, int]] = {}

    # ------------------------------------------------------------------------------------------------ feeding

    def feed(self, event: dict[str, Any]) -> list[Note]:
        """Account one ansible-runner event; what it changed, for the display."""
        self.events += 1
        kind = event.get("event", "")
        data = event.get("event_data") or {}
        if kind == "playbook_on_play_start":
            return self._play_start(data)
        if kind == "verbose" and str(event.get("stdout", "")).startswith(MARKER):
            return self._batch_info(data, str(event["stdout"]))
        if kind == "playbook_on_no_hosts_matched":
            where = self._find(data)
            if where is None:
                return []
            play, batch = where
            play.no_hosts, play.planned = True, 0
            play.batches.remove(batch)
            self._current = None
            return [Note("no_hosts", play=play)]
        if kind in TASK_STARTS:
            where = self._find(data)
            if where is None:
                return []
            _, batch = where
            batch.tasks += 1
            batch.task = str(data.get("task") or data.get("name") or "")
            return [*self._announce(where), Note("task", batch=batch, task=batch.task)]
        if kind in RESULTS:
            return self._result(RESULTS[kind], data)
        if kind == "playbook_on_stats":
            self.stats = {}
            for key, name in STATS.items():
                for host, n in (data.get(key) or {}).items():
                    self.stats.setdefault(host, dict.fromkeys(STATS.values(), 0))[name] = int(n)
            for _, batch in self._batches.values():  # a failure rescued for good is not a failed host
                batch.failed_hosts = [h for h in batch.failed_hosts if self._still_failed(h)]
                batch.unreachable_hosts = [h for h in batch.unreachable_hosts if self._still_failed(h)]
            return [*self._finish(), Note("stats")]
        return []

    def close(self) -> list[Note]:
        """The run ended (also without ansible's recap: canceled, or ansible-playbook failed)."""
        return self._finish()

    def _play_start(self, data: dict[str, Any]) -> list[Note]:
        notes = self._finish()
        uuid = str(data.get("play_uuid") or data.get("uuid") or "")
        base = uuid.split("_")[0]
        play = next((p for p in self.plays if p.uuid == base), None)
        if play is None:
            play = Play(
                name=str(data.get("play") or data.get("name") or ""),
                uuid=base,
                pattern=str(data.get("play_pattern") or data.get("pattern") or ""),
            )
            self.plays.append(play)
            notes.append(Note("play", play=play))
        batch = Batch(play=play.name, number=len(play.batches) + 1, of=play.planned)
        play.batches.append(batch)
        self._batches[uuid] = (play, batch)
        self._current = (play, batch)
        return notes

    def _batch_info(self, data: dict[str, Any], line: str) -> list[Note]:
        where = self._find(data)
        try:
            info = json.loads(line[len(MARKER) :])
        except ValueError:
            return []
        if where is None or not isinstance(info, dict):
            return []
        play, batch = where
        play.planned = int(info.get("batches", 0))
        if isinstance(info.get("play_hosts"), list):
            play.hosts = [str(h) for h in info["play_hosts"]]
        for b in play.batches:
            b.of = play.planned
        batch.number = int(info.get("batch", batch.number))
        batch.hosts = [str(h) for h in info.get("hosts") or []]
        return self._announce(where) if play.planned else []

    def _announce(self, where: tuple[Play, Batch]) -> list[Note]:
        _, batch = where
        if batch.announced:
            return []
        batch.announced = True
        return [Note("batch", batch=batch)]

    def _result(self, kind: str, data: dict[str, Any]) -> list[Note]:
        where = self._find(data)
        host = str(data.get("host") or "")
        if where is None or not host:
            return []
        _, batch = where
        notes = self._announce(where)
        if host not in batch.hosts:
            batch.hosts.append(host)  # a run without the hwaac_batches callback, or a delegated host
        res = data.get("res")
        if not isinstance(res, dict):
            res = {}
        counts = self._counts.setdefault(host, dict.fromkeys(STATS.values(), 0))
        task = str(data.get("task") or "")
        if kind == "failed" and data.get("ignore_errors"):
            batch.ignored += 1
            counts["ignored"] += 1
            return notes
        if kind == "ok":
            batch.ok += 1
            counts["ok"] += 1
            if res.get("changed"):
                batch.changed += 1
                counts["changed"] += 1
                if host not in batch.changed_hosts:
                    batch.changed_hosts.append(host)
        elif kind == "skipped":
            batch.skipped += 1
            counts["skipped"] += 1
        else:
            setattr(batch, kind, getattr(batch, kind) + 1)
            counts[kind] += 1
            hosts = batch.failed_hosts if kind == "failed" else batch.unreachable_hosts
            if host not in hosts:
                hosts.append(host)
            notes.append(Note(kind, batch=batch, host=host, task=task, message=_message(res)))
        return notes

    def _find(self, data: dict[str, Any]) -> tuple[Play, Batch] | None:
        uuid = str(data.get("play_uuid") or "")
        return self._batches.get(uuid, self._current)

    def _finish(self) -> list[Note]:
        out: list[Note] = []
        for play in self.plays:
            for batch in play.batches:
                if not batch.finished:
                    batch.finished = True
                    out.append(Note("done", batch=batch, play=play))
        return out

    def _still_failed(self, host: str) -> bool:
        s = (self.stats or {}).get(host)
        return s is None or bool(s["failed"] or s["unreachable"])

    # ------------------------------------------------------------------------------------------------ results

    @property
    def batches(self) -> list[Batch]:
        return [b for p in self.plays for b in p.batches]

    @property
    def hosts(self) -> dict[str, dict[str, int]]:
        """The recap per host: ansible's (``playbook_on_stats``), else counted from the task results."""
        return dict(sorted((self.stats if self.stats is not None else self._counts).items()))

    def summary(self) -> dict[str, Any]:
        """Plays, batches, the recap per host and the totals (``changed``: task results that changed something)."""
        hosts = self.hosts
        return {
            "changed": sum(h["changed"] for h in hosts.values()),
            "changed_hosts": [h for h, c in hosts.items() if c["changed"]],
            "failed_hosts": [h for h, c in hosts.items() if c["failed"]],
            "unreachable_hosts": [h for h, c in hosts.items() if c["unreachable"]],
            "not_started": [h for p in self.plays for h in p.not_started],
            "plays": [p.to_dict() for p in self.plays],
            "batches": [b.to_dict() for b in self.batches],
            "hosts": hosts,
            "events": self.events,
        }
