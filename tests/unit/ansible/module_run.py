"""Run a host module of the collection the way Ansible does: ``python -m <module> ARGS.json`` where the file holds
``{"ANSIBLE_MODULE_ARGS": {...}}`` (with ``_ansible_check_mode`` / ``_ansible_diff``), from the repository root so
``ansible_collections.aiinfra.hwaac`` imports; returns the module's JSON result. ``run_case`` runs one case of
tests/unit/ansible/cases/<module>.yml (format in that folder's README.md) on a fake host (fake_host.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

if TYPE_CHECKING:
    from tests.unit.ansible.fake_host import FakeHost

REPO = Path(__file__).resolve().parents[3]
CASES = Path(__file__).resolve().parent / "cases"


def run_module(name: str, args: dict, args_file: Path, env: dict[str, str], *, check: bool = False) -> dict:
    """Run ``plugins/modules/<name>.py`` with ``args`` (written to ``args_file``) in ``env``."""
    args_file.write_text(
        json.dumps({"ANSIBLE_MODULE_ARGS": {**args, "_ansible_check_mode": check, "_ansible_diff": True}})
    )
    proc = subprocess.run(
        [sys.executable, "-m", f"ansible_collections.aiinfra.hwaac.plugins.modules.{name}", str(args_file)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.stdout, proc.stderr
    return json.loads(proc.stdout)


def load_cases(module: str) -> list[Any]:
    """The cases of ``cases/<module>.yml`` as pytest params, each with its ``id``."""
    cases = yaml.safe_load((CASES / f"{module}.yml").read_text())
    ids = [case["id"] for case in cases]
    assert len(ids) == len(set(ids)), f"cases/{module}.yml: an id is used twice"
    return [pytest.param(case, id=case["id"]) for case in cases]


def _fill(value: Any, names: dict[str, str]) -> Any:
    """``value`` with each ``{name}`` in its strings replaced by the host's value."""
    if isinstance(value, str):
        for name, text in names.items():
            value = value.replace("{" + name + "}", text)
        return value
    if isinstance(value, list):
        return [_fill(v, names) for v in value]
    if isinstance(value, dict):
        return {_fill(k, names): _fill(v, names) for k, v in value.items()}
    return value


_MISSING = object()


def _at(result: Any, path: str) -> Any:
    """The value at ``a/b/0`` in a result (``/`` separates keys, since result keys hold dots), or _MISSING."""
    for key in path.split("/"):
        if isinstance(result, list):
            result = (
                result[int(key)] if key.lstrip("-").isdigit() and -len(result) <= int(key) < len(result) else _MISSING
            )
        elif isinstance(result, dict):
            result = result.get(key, _MISSING)
        else:
            return _MISSING
        if result is _MISSING:
            return _MISSING
    return result


def _call(host: FakeHost, spec: Any) -> Any:
    """Call a host method: ``name``, ``[name, arg, ...]`` or ``{name: {keyword: value}}``."""
    if isinstance(spec, str):
        return getattr(host, spec)()
    if isinstance(spec, list):
        return getattr(host, spec[0])(*spec[1:])
    ((name, kwargs),) = spec.items()
    return getattr(host, name)(**(kwargs or {}))


def _contains(got: Any, want: Any) -> bool:
    if isinstance(got, dict) and isinstance(want, dict):
        return all(k in got and got[k] == v for k, v in want.items())
    if isinstance(got, list) and isinstance(want, str):  # a line of a list of outputs
        return any(want in str(item) for item in got)
    return want in got


def check_result(res: dict, step: dict, where: str) -> None:
    """Assert a step's expectations on a module result."""
    for path, want in (step.get("output") or {}).items():
        got = _at(res, path)
        assert got is not _MISSING, f"{where}: {path} is not in the result {res}"
        assert got == want, f"{where}: {path} is {got!r}, wanted {want!r}"
    for path, keys in (step.get("keys") or {}).items():
        got = _at(res, path)
        assert isinstance(got, dict) and list(got) == keys, f"{where}: the keys of {path} are not {keys}: {got!r}"
    for path, wants in (step.get("contains") or {}).items():
        got = _at(res, path)
        assert got is not _MISSING, f"{where}: {path} is not in the result {res}"
        for want in wants if isinstance(wants, list) else [wants]:
            assert _contains(got, want), f"{where}: {path} = {got!r} lacks {want!r}"
    for path, unwanted in (step.get("lacks") or {}).items():
        got = _at(res, path)
        for want in unwanted if isinstance(unwanted, list) else [unwanted]:
            assert got is _MISSING or not _contains(got, want), f"{where}: {path} = {got!r} holds {want!r}"
    for path, want in (step.get("prefix") or {}).items():
        got = _at(res, path)
        assert isinstance(got, str) and got.startswith(want), f"{where}: {path} = {got!r} does not start {want!r}"
    for path in step.get("absent") or []:
        assert _at(res, path) is _MISSING, f"{where}: {path} should not be in the result {res}"
    for path, value in (step.get("not") or {}).items():
        assert _at(res, path) != value, f"{where}: {path} must not be {value!r}"


def check_probes(host: FakeHost, probes: list[dict], where: str) -> None:
    """The fake host's state after a step: each probe calls a host method and compares what it returns."""
    for probe in probes:
        got = _call(host, probe["call"])
        label = f"{where}: {probe['call']}"
        if "equals" in probe:
            assert got == probe["equals"], f"{label} is {got!r}, wanted {probe['equals']!r}"
        if "prefix" in probe:
            assert str(got).startswith(probe["prefix"]), f"{label} = {got!r} does not start {probe['prefix']!r}"
        for want in probe.get("contains", []):
            assert _contains(got, want), f"{label} = {got!r} lacks {want!r}"
        for want in probe.get("lacks", []):
            assert not _contains(got, want), f"{label} = {got!r} holds {want!r}"


def run_case(host: FakeHost, case: dict) -> None:
    """Set the host up as the case says, then run each step (the case itself when it has no ``steps``) and check
    the result and the host's state after it."""
    case = _fill(case, host.placeholders())
    for spec in case.get("mocks") or []:
        _call(host, spec)
    steps = case.get("steps") or [case]
    for n, step in enumerate(steps):
        where = f"{case['id']} step {n}"
        for spec in step.get("before") or []:
            _call(host, spec)
        res = host.run(host.case_args(step.get("input") or {}), check=bool((step.get("flags") or {}).get("check")))
        if not step.get("failed_ok") and "failed" not in (step.get("output") or {}):
            assert not res.get("failed"), f"{where}: {res.get('msg')}"
        check_result(res, step, where)
        check_probes(host, step.get("state") or [], where)
