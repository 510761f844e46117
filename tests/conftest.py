"""Fixtures and hooks for every test folder: the SONiC toolkit, the xdist grouping guard, the NetBox prewarm, the
run's reaper (tests/run_reaper.py: a killed run leaves nothing running).

``sonic_toolkit`` is the toolkit named by ``HWAAC_SONIC_TOOLKIT`` (:mod:`hwaac.sonic_toolkit`). Without it a test
that needs it FAILS when ``HWAAC_REQUIRE_SONIC_TOOLKIT=1`` or ``CI=true`` (CI must not pass without SONiC's own
checks) and is skipped, with the reason, otherwise. Set it up with ``scripts/sonic-toolkit.sh``. ``promtool``
(Debian's ``prometheus``, ``scripts/install-system-deps.sh``) is required the same way, by
``HWAAC_REQUIRE_PROMTOOL=1`` or ``CI=true``.

When the run holds tests that use the local NetBox, one process starts ``hwaac netbox up`` in the background at
collection and those tests go last, so the first install on a new machine (~2 min of one core; the migrations are
restored from hwaac.devnetbox.baseline) overlaps the other tests instead of holding both workers. Within each part the
tests marked ``cost(SECONDS)`` (how long they hold a worker on 2 busy cores, measured) go first, the costliest
first: xdist hands the short tests out last, and no worker idles at the end while the other finishes a long one.

The interpreter's folder (the virtual environment's ``bin``) goes first on PATH, as ``activate`` would put it: the
fakes of tests/fakes/bin (``#!/usr/bin/env python3``) and the tools the tests start run on the project's Python,
not on whatever ``python3`` PATH found first (a pyenv shim costs ~100 ms of bash per call).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from hwaac.sonic_toolkit import Toolkit, ToolkitError, locate


def sonic_toolkit_required() -> bool:
    """Whether a missing toolkit fails the tests that need it (CI) rather than skipping them."""
    return os.environ.get("HWAAC_REQUIRE_SONIC_TOOLKIT") == "1" or os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="session")
def sonic_toolkit() -> Toolkit:
    """The set-up SONiC toolkit (``HWAAC_SONIC_TOOLKIT``); fails or skips the test without it (module docstring)."""
    try:
        return locate()
    except ToolkitError as exc:
        if sonic_toolkit_required():
            pytest.fail(
                f"the SONiC toolkit is required here (HWAAC_REQUIRE_SONIC_TOOLKIT=1 or CI=true): {exc}", pytrace=False
            )
        pytest.skip(f"SONiC toolkit not available: {exc}")


def promtool_required() -> bool:
    """Whether a missing promtool fails the tests that need it (CI) rather than skipping them."""
    return os.environ.get("HWAAC_REQUIRE_PROMTOOL") == "1" or os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="session")
def promtool() -> str:
    """The path of ``promtool``; fails or skips the test without it (module docstring)."""
    found = shutil.which("promtool")
    if found is None:
        if promtool_required():
            pytest.fail(
                "promtool is required here (HWAAC_REQUIRE_PROMTOOL=1 or CI=true): not on PATH; "
                "scripts/install-system-deps.sh installs Debian's prometheus",
                pytrace=False,
            )
        pytest.skip("promtool not on PATH (scripts/install-system-deps.sh installs Debian's prometheus)")
    return found


NETBOX_FIXTURE = "local_netbox"  # tests/integration/conftest.py: every NetBox fixture depends on it
_prewarm: list[subprocess.Popen[bytes]] = []


def uses_netbox(item: pytest.Item) -> bool:
    return NETBOX_FIXTURE in getattr(item, "fixturenames", ())


def cost(item: pytest.Item) -> float:
    """The test's ``cost(SECONDS)`` mark, 0 without one or in an ``xdist_group`` (a group is handed out whole and
    its tests keep the file's order: the twin modules build on it)."""
    mark = item.get_closest_marker("cost")
    if mark is None or item.get_closest_marker("xdist_group"):
        return 0.0
    return float(mark.args[0])


def pytest_configure(config: pytest.Config) -> None:
    venv_bin = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "").split(os.pathsep)
    if path[:1] != [venv_bin]:
        os.environ["PATH"] = os.pathsep.join([venv_bin, *(p for p in path if p != venv_bin)])
    if not hasattr(config, "workerinput"):  # the main process, before xdist starts its workers
        _start_reaper()


_reaper: list[subprocess.Popen[str]] = []


def _start_reaper() -> None:
    """Mark every process of the run with ``HWAAC_TEST_RUN`` (kept when the caller set it) and start the run's
    reaper (tests/run_reaper.py) in its own session: when this process dies without saying ``done`` (a killed
    ``make test``), it stops whatever of the run is left, detached NetBox servers and twins included."""
    from tests.run_reaper import ENV, OWNER

    if os.environ.get(OWNER):  # a pytest that a test of a run started: its processes are the outer run's
        return
    run = os.environ.get(ENV) or uuid.uuid4().hex
    os.environ[ENV] = run
    os.environ[OWNER] = str(os.getpid())
    _reaper.append(
        subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("run_reaper.py")), run],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run ended normally: its fixtures took everything down, the reaper has nothing to do."""
    while _reaper:
        reaper = _reaper.pop()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            reaper.communicate("done\n", timeout=30)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests that use the local NetBox after the others, each part the costliest first (a stable sort: every
    worker collects the same order), and the NetBox started for them in the background by one process (xdist
    worker gw0, or pytest itself without xdist)."""
    _refuse_lost_groups(config, items)
    items.sort(key=lambda item: (uses_netbox(item), -cost(item)))
    worker = getattr(config, "workerinput", {}).get("workerid", "gw0")
    if worker == "gw0" and not config.option.collectonly and any(uses_netbox(i) for i in items):
        _prewarm.append(_start_netbox_prewarm())


def _start_netbox_prewarm() -> subprocess.Popen[bytes]:
    """``hwaac netbox up`` in the background, output to the state folder's logs/prewarm.log; it gets SIGTERM when
    this process ends (util-linux ``setpriv --pdeathsig``) and the fixture's own ``up`` waits for it on the setup
    lock."""
    from hwaac.devnetbox.local import LocalNetBox

    logs = LocalNetBox().logs
    logs.mkdir(parents=True, exist_ok=True)
    hwaac = str(Path(sys.executable).with_name("hwaac"))
    with open(logs / "prewarm.log", "wb") as out:
        return subprocess.Popen(
            ["setpriv", "--pdeathsig", "TERM", "--", hwaac, "netbox", "up"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A prewarm still running (a run stopped early) is stopped: nothing of the run goes on after it."""
    for proc in _prewarm:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _refuse_lost_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse to run when ``--dist loadgroup`` would not keep an ``xdist_group`` on one worker (pytest-xdist puts
    the group in the nodeid; a pytest that ignores that would split the twin modules over both workers)."""
    if not getattr(config.option, "loadgroup", False):
        return
    lost = [i.nodeid for i in items if i.get_closest_marker("xdist_group") and "@" not in i.nodeid]
    if lost:
        raise pytest.UsageError(
            f"--dist loadgroup has no effect with pytest {pytest.__version__} and this "
            f"pytest-xdist ({lost[0]} carries no group): pin pytest as pyproject.toml does"
        )
