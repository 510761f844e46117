"""Run an action plugin of aiinfra.hwaac as Ansible runs it for one task: the task, connection, loader and play
context are mocks, the templar returns values as given, and the host module, when the plugin calls one, is what
``execute`` returns (the caller runs the real module through module_run.py, usually with fake_host.FakeHost)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from unittest.mock import MagicMock


def run_action_plugin(
    action_cls: type,
    args: dict[str, Any],
    *,
    check_mode: bool = False,
    task_vars: dict[str, Any] | None = None,
    module: str = "",
    execute: Callable[[dict[str, Any]], dict] | None = None,
) -> dict[str, Any]:
    """The task result of ``action_cls`` run with ``args``; with ``execute``, every call of the host module (which
    must be ``aiinfra.hwaac.<module>``) gets ``execute(module_args)``."""
    task = MagicMock()
    task.args = args
    task.check_mode = check_mode
    task.async_val = 0
    action = action_cls(
        task=task,
        connection=MagicMock(),
        play_context=MagicMock(check_mode=check_mode),
        loader=MagicMock(),
        templar=MagicMock(template=lambda value: value),
        shared_loader_obj=None,
    )
    if execute is not None:

        def execute_module(
            module_name: str, module_args: dict[str, Any], task_vars: Any = None, wrap_async: bool = False
        ) -> dict:
            assert module_name == f"aiinfra.hwaac.{module}"
            return execute(module_args)

        action._execute_module = execute_module  # type: ignore[method-assign]
    return action.run(task_vars=task_vars or {})
