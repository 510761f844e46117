# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""Drive a host module that takes one item at the top level or a list of them (mlxconfig devices, roce_qos ports).

Every item is checked before any runs; the single form then ends the task with that item's result, the list form
processes every item, fails at the end naming each that failed, and keeps each item's result. Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class ItemFailure(Exception):
    """One item could not be brought to the desired values; ``extra`` goes into its result as it is."""

    def __init__(self, msg: str, **extra: object) -> None:
        super().__init__(msg)
        self.msg = msg
        self.extra = extra


class Item(Protocol):
    """What :class:`PerItem` needs of an item; every method but ``diff`` may raise :class:`ItemFailure`."""

    name: str

    def check(self) -> None:
        """Check the desired values before anything runs."""

    def apply(self) -> dict:
        """Bring the item to the desired values; returns its result, the item's name under the item key."""

    def failure(self, exc: ItemFailure) -> dict:
        """The list form's result of an item that failed."""

    def failure_alone(self, exc: ItemFailure) -> dict:
        """The fields besides ``msg`` with which the single form fails."""

    def diff(self) -> dict[str, dict]:
        """``{"before": ..., "after": ...}`` of what the item changed or would change."""


class PerItem:
    """The single-or-list driver. ``key`` names an item in its result (``device``), ``option`` the list option
    (``devices``), ``tool`` the module in the failure message; ``named`` prefixes each failure with its item."""

    def __init__(
        self, module: Any, items: list[Item], *, single: bool, key: str, option: str, tool: str, named: bool = True
    ) -> None:
        self.module = module
        self.items = items
        self.single = single
        self.key = key
        self.option = option
        self.tool = tool
        self.named = named

    def check(self) -> None:
        """Fail the task on an item listed twice or one whose desired values are wrong; nothing has run yet."""
        seen: set[str] = set()
        for item in self.items:
            if item.name in seen:
                self.module.fail_json(msg=f"{self.key} {item.name} is listed more than once in {self.option}")
            seen.add(item.name)
            try:
                item.check()
            except ItemFailure as exc:
                if self.single:
                    self.module.fail_json(msg=exc.msg, **item.failure_alone(exc))
                self.module.fail_json(msg=f"{item.name}: {exc.msg}")

    def run(self, summarize: Callable[[list[dict], dict[str, dict]], dict]) -> None:
        """Process the items and end the task. ``summarize(results, diff)`` gives the list form's top-level fields
        besides the results (``diff`` among them, where the module wants it)."""
        if self.single:
            item = self.items[0]
            try:
                result = item.apply()
            except ItemFailure as exc:
                self.module.fail_json(msg=exc.msg, **item.failure_alone(exc))
            result.pop(self.key)
            result["diff"] = item.diff()
            self.module.exit_json(**result)

        results: list[dict] = []
        diff: dict[str, dict] = {"before": {}, "after": {}}
        for item in self.items:
            try:
                results.append(item.apply())
            except ItemFailure as exc:
                results.append(item.failure(exc))
            changed = item.diff()
            if changed["before"] or changed["after"]:
                diff["before"][item.name] = changed["before"]
                diff["after"][item.name] = changed["after"]
        summary = summarize(results, diff)
        failed = [r for r in results if r.get("failed")]
        if failed:
            reasons = [f"{r[self.key]}: {r['msg']}" if self.named else r["msg"] for r in failed]
            self.module.fail_json(
                msg=f"{self.tool} failed on {len(failed)} of {len(results)} {self.option}: " + "; ".join(reasons),
                **{f"failed_{self.option}": [r[self.key] for r in failed], self.option: results},
                **summary,
            )
        self.module.exit_json(**{self.option: results}, **summary)
