"""hwaac.deploy.accounting and its display, fed the recorded event streams of real ``hwaac deploy`` runs
(tests/fixtures/deploy, recorded by its record.py against the simulated demo site): batches n/N with their hosts
and counts, the per-host recap, the hosts a stopped rollout never started, the plain progress lines, and Ansible's
text (play and task names, messages) shown as written by both displays. The callback's batch arithmetic is checked
against ansible-core's own (PlaybookExecutor)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from ansible.executor.playbook_executor import PlaybookExecutor

from hwaac.deploy.accounting import MARKER, Accounting
from hwaac.deploy.callback import hwaac_batches
from hwaac.deploy.progress import PlainDisplay, RichDisplay, recap

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "deploy"
PUSH = "Push SONiC config_db in batches, with rollback and a BGP health gate"
RENDER = "Render the switch configs on the controller"
FAILING = "Push the rendered config_db through the generic config updater"
NIC = "NIC firmware and RoCE settings, then the per-rail netplan and sysctls"
S1, S2, NODE = "spine-p0-01", "spine-p0-02", "gpu-su01-h01"


def events(scenario: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / f"{scenario}.jsonl").read_text().splitlines()]


def fed(scenario: str, keep: Any = lambda e: True) -> Accounting:
    acc = Accounting()
    for event in events(scenario):
        if keep(event):
            acc.feed(event)
    acc.close()
    return acc


# scenario -> batches as (play, n, of, hosts, tasks, changed hosts, failed hosts, unreachable hosts)
BATCHES = {
    "first_push": [(PUSH, 1, 2, [S1], 8, [S1], [], []), (PUSH, 2, 2, [S2], 8, [S2], [], [])],
    "second_run": [(PUSH, 1, 2, [S1], 8, [], [], []), (PUSH, 2, 2, [S2], 8, [], [], [])],
    "check_mode": [(PUSH, 1, 1, [S1, S2], 8, [S1, S2], [], [])],
    "failed_rollback": [(PUSH, 1, 2, [S1], 3, [], [S1], [])],
    "unreachable": [(PUSH, 1, 1, [S2, S1], 8, [S1], [], [S2])],
    "site_limited": [
        (PUSH, 1, 1, [S1], 8, [S1], [], []),
        (NIC, 1, 1, [NODE], 31, [NODE], [], []),
        ("Lustre client setup", 1, 1, [NODE], 15, [NODE], [], []),
    ],
}
# scenario -> ansible's recap per host: (ok, changed, failed, unreachable, skipped)
HOSTS = {
    "first_push": {S1: (5, 1, 0, 0, 3), S2: (5, 1, 0, 0, 3)},
    "second_run": {S1: (3, 0, 0, 0, 5), S2: (3, 0, 0, 0, 5)},
    "check_mode": {S1: (3, 1, 0, 0, 5), S2: (3, 1, 0, 0, 5)},
    "failed_rollback": {S1: (2, 0, 1, 0, 0)},
    "unreachable": {S1: (5, 1, 0, 0, 3), S2: (2, 0, 0, 1, 0)},
    "site_limited": {NODE: (39, 13, 0, 0, 6), S1: (5, 1, 0, 0, 3)},
}
# scenario -> (summary's changed total, hosts never started)
TOTALS = {
    "first_push": (2, []),
    "second_run": (0, []),
    "check_mode": (2, []),
    "failed_rollback": (0, [S2]),
    "unreachable": (1, []),
    "site_limited": (14, []),
}


def batch_rows(acc: Accounting) -> list[tuple[Any, ...]]:
    return [
        (b.play, b.number, b.of, b.hosts, b.tasks, sorted(b.changed_hosts), b.failed_hosts, b.unreachable_hosts)
        for b in acc.batches
    ]


@pytest.mark.parametrize("scenario", sorted(BATCHES))
def test_batches_hosts_and_totals_of_a_recorded_run(scenario: str) -> None:
    acc = fed(scenario)
    assert batch_rows(acc) == [(p, n, of, h, t, sorted(c), f, u) for p, n, of, h, t, c, f, u in BATCHES[scenario]]
    assert {
        h: (c["ok"], c["changed"], c["failed"], c["unreachable"], c["skipped"]) for h, c in acc.hosts.items()
    } == HOSTS[scenario]
    summary = acc.summary()
    assert (summary["changed"], summary["not_started"]) == TOTALS[scenario]
    assert summary["plays"][0] == {
        "name": RENDER,
        "pattern": "localhost",
        "hosts": [],
        "batches_planned": 0,
        "batches_run": 0,
        "no_hosts_matched": True,
        "not_started": [],
    }
    assert all(b.finished for b in acc.batches)


def test_the_task_results_add_up_to_ansibles_recap() -> None:
    # the per-batch counts come from the task events, the host recap from playbook_on_stats: they agree, except
    # that ansible's recap leaves out a skipped meta task (ansible-core plugins/strategy/__init__.py _execute_meta)
    for scenario in BATCHES:
        acc = fed(scenario)
        for key in ("ok", "changed", "unreachable"):
            assert sum(getattr(b, key) for b in acc.batches) == sum(h[key] for h in acc.hosts.values()), scenario
        meta = sum(
            1
            for e in events(scenario)
            if e["event"] == "runner_on_skipped" and e["event_data"].get("task_action") == "ansible.builtin.meta"
        )
        assert sum(b.skipped for b in acc.batches) == sum(h["skipped"] for h in acc.hosts.values()) + meta


def test_without_the_callbacks_lines_batches_are_counted_from_the_events() -> None:
    # a run recorded elsewhere (AWX, plain ansible-runner) has no hwaac-batch lines: batch n of an unknown N, its
    # hosts the hosts that reported, the same counts
    acc = fed("first_push", keep=lambda e: not str(e.get("stdout", "")).startswith(MARKER))
    assert [(b.label, b.hosts, b.changed_hosts) for b in acc.batches if b.play == PUSH] == [
        ("1/?", [S1], [S1]),
        ("2/?", [S2], [S2]),
    ]
    assert acc.summary()["changed"] == 2


def test_a_run_cut_short_is_recapped_from_its_task_results() -> None:
    # canceled before ansible's recap: the events so far are the recap, the open batch is closed
    stream = events("first_push")
    cut = next(
        i
        for i, e in enumerate(stream)
        if e["event"] == "playbook_on_play_start" and e["event_data"]["play_uuid"].endswith("_2")
    )
    acc = Accounting()
    for event in stream[: cut + 3]:
        acc.feed(event)
    notes = acc.close()
    assert [n.batch.label for n in notes if n.kind == "done" and n.batch] == ["2/2"]
    assert acc.stats is None
    assert acc.hosts == {
        S1: {"ok": 5, "changed": 1, "failed": 0, "unreachable": 0, "skipped": 3, "rescued": 0, "ignored": 0}
    }


def test_plain_progress_names_each_batch_its_failures_and_the_end() -> None:
    out = io.StringIO()
    display, acc = PlainDisplay(out), Accounting()
    for event in events("failed_rollback"):
        for note in acc.feed(event):
            display.note(note, acc)
    lines = out.getvalue().splitlines()
    assert lines[:4] == [
        f"play {RENDER!r} (hosts: localhost)",
        f"play {RENDER!r}: no hosts matched",
        f"play {PUSH!r} (hosts: switches)",
        f"  batch 1/2: 1 host(s): {S1}",
    ]
    assert lines[4].startswith(
        f"    FAILED {S1}: Push the rendered config_db through the generic config updater: "
        "config apply-patch failed (rolled back to checkpoint hwaac-pre-push)"
    )
    assert lines[5] == (f"  batch 1/2 done: 3 tasks, ok 2, changed 0, failed 1 ({S1}), unreachable 0, skipped 0")
    assert len(lines) == 6  # batch 2 never started


class Terminal(io.StringIO):
    """stderr as a terminal, where the rich display draws each update."""

    def isatty(self) -> bool:
        return True


def retold(text: str) -> tuple[list[dict[str, Any]], str, str, str]:
    """The failed run with ``text`` in its play's name, the failing task's name and its message."""
    play, task, message = f"Push {text}", f"Apply {text}", f"path {text} refused"
    stream = events("failed_rollback")
    for event in stream:
        data = event["event_data"]
        if data.get("play") == PUSH:
            data["play"] = play
        if data.get("task") == FAILING:
            data["task"] = task
        if event["event"] == "runner_on_failed":
            data["res"]["msg"] = message
    return stream, play, task, message


# text that rich would read as markup or an emoji code
MARKUP = ["[/etc/x]", "[/]", "[bold]not bold", "[red]x[/red]", ":warning:", "\\[x]"]


@pytest.mark.parametrize("display", [PlainDisplay, RichDisplay])
@pytest.mark.parametrize("text", MARKUP)
def test_the_displays_show_ansibles_text_as_written(
    display: type[PlainDisplay | RichDisplay], text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    stream, play, task, message = retold(text)
    out, acc = Terminal(), Accounting()
    shown = display(out)
    for event in stream:
        for note in acc.feed(event):
            shown.note(note, acc)
    shown.close()
    text_out = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    assert f"FAILED {S1}: {task}: {message}" in text_out
    assert f"play {play!r}" in text_out


def test_the_recap_has_a_line_per_host_and_per_batch() -> None:
    text = recap(fed("failed_rollback").summary())
    assert text.splitlines() == [
        "host         ok  changed  failed  unreachable  skipped  rescued  ignored",
        f"{S1}   2        0       1            0        0        0        0",
        "batches:",
        f"  {PUSH!r} batch 1/2: {S1}: 3 tasks, changed 0, failed 1, unreachable 0",
        f"not started (the rollout stopped): {S2}",
    ]


# serial (as the play holds it after templating) and the play's host count
SERIALS = [([], 5), ([2], 5), (["25%"], 10), ([1, 2, "50%"], 10), (["1%"], 3), ([0], 3), ([10], 3), (["30%"], 7)]


@pytest.mark.parametrize(("serial", "hosts"), SERIALS)
def test_the_callbacks_batch_sizes_are_ansibles(serial: list[Any], hosts: int) -> None:
    names = [f"h{i}" for i in range(hosts)]
    executor = SimpleNamespace(_inventory=SimpleNamespace(get_hosts=lambda pattern, order=None: list(names)))
    play = SimpleNamespace(hosts="all", order=None, serial=serial)
    expected = [len(b) for b in PlaybookExecutor._get_serialized_batches(executor, play)]
    assert hwaac_batches.batch_sizes(serial, hosts) == expected
