"""plugins/module_utils/per_item.py: the single-or-list driver of mlxconfig and roce_qos, on items that record what
they were asked to do: every item checked before any runs, every item of a list processed, failures named."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.aiinfra.hwaac.plugins.module_utils.per_item import ItemFailure, PerItem


class Ended(Exception):
    """exit_json / fail_json: the module ends with ``fields``."""

    def __init__(self, failed: bool, fields: dict[str, Any]) -> None:
        super().__init__(fields.get("msg", ""))
        self.failed = failed
        self.fields = fields


class FakeModule:
    def exit_json(self, **fields: Any) -> None:
        raise Ended(False, fields)

    def fail_json(self, **fields: Any) -> None:
        raise Ended(True, fields)


class Thing:
    """An item that fails its check or its run where told; ``log`` gets each step in order."""

    def __init__(
        self, name: str, log: list[str], *, bad: bool = False, breaks: bool = False, changes: bool = True
    ) -> None:
        self.name = name
        self.log = log
        self.bad = bad
        self.breaks = breaks
        self.changes = {"before": {"x": 1}, "after": {"x": 2}} if changes else {"before": {}, "after": {}}

    def check(self) -> None:
        self.log.append(f"check {self.name}")
        if self.bad:
            raise ItemFailure("bad value")

    def apply(self) -> dict:
        self.log.append(f"apply {self.name}")
        if self.breaks:
            raise ItemFailure("tool failed", rc=3)
        return {"thing": self.name, "changed": True}

    def failure(self, exc: ItemFailure) -> dict:
        return {"thing": self.name, "failed": True, "msg": exc.msg, **exc.extra}

    def failure_alone(self, exc: ItemFailure) -> dict:
        return {"raw": [f"{self.name} ran"]}

    def diff(self) -> dict[str, dict]:
        return self.changes


def drive(things: list[Thing], *, single: bool = False, named: bool = True) -> Ended:
    driver = PerItem(FakeModule(), things, single=single, key="thing", option="things", tool="demo", named=named)
    with pytest.raises(Ended) as ended:
        driver.check()
        driver.run(lambda results, diff: {"changed": any(r.get("changed") for r in results), "diff": diff})
    return ended.value


def test_a_bad_item_stops_the_list_before_any_item_runs() -> None:
    log: list[str] = []
    ended = drive([Thing("a", log), Thing("b", log, bad=True), Thing("c", log)])
    assert ended.failed and ended.fields == {"msg": "b: bad value"}
    assert log == ["check a", "check b"]


def test_an_item_listed_twice_is_refused() -> None:
    log: list[str] = []
    ended = drive([Thing("a", log), Thing("a", log)])
    assert ended.fields == {"msg": "thing a is listed more than once in things"}
    assert log == ["check a"]


def test_every_item_runs_and_the_task_names_each_failure() -> None:
    log: list[str] = []
    ended = drive([Thing("a", log, breaks=True), Thing("b", log, changes=False), Thing("c", log, breaks=True)])
    assert log == ["check a", "check b", "check c", "apply a", "apply b", "apply c"]
    assert ended.failed
    assert ended.fields["msg"] == "demo failed on 2 of 3 things: a: tool failed; c: tool failed"
    assert ended.fields["failed_things"] == ["a", "c"]
    assert [r["thing"] for r in ended.fields["things"]] == ["a", "b", "c"]
    assert ended.fields["things"][0]["rc"] == 3
    assert ended.fields["diff"] == {"before": {"a": {"x": 1}, "c": {"x": 1}}, "after": {"a": {"x": 2}, "c": {"x": 2}}}


def test_unnamed_failures_keep_their_own_message() -> None:
    ended = drive([Thing("a", [], breaks=True)], named=False)
    assert ended.fields["msg"] == "demo failed on 1 of 1 things: tool failed"


def test_a_list_that_succeeds_exits_with_the_summary() -> None:
    ended = drive([Thing("a", []), Thing("b", [])])
    assert not ended.failed
    assert list(ended.fields) == ["things", "changed", "diff"]


def test_the_single_form_returns_the_item_result_without_its_name() -> None:
    ended = drive([Thing("a", [])], single=True)
    assert not ended.failed and ended.fields == {"changed": True, "diff": {"before": {"x": 1}, "after": {"x": 2}}}
    broken = drive([Thing("a", [], breaks=True)], single=True)
    assert broken.failed and broken.fields == {"msg": "tool failed", "raw": ["a ran"]}
    bad = drive([Thing("a", [], bad=True)], single=True)
    assert bad.failed and bad.fields == {"msg": "bad value", "raw": ["a ran"]}
