"""Fixtures for every test folder: the SONiC toolkit (SONiC's own YANG validator and GCU, ../shared/sonic).

``sonic_toolkit`` is the toolkit named by ``HWAAC_SONIC_TOOLKIT`` (:mod:`hwaac.sonic_toolkit`). Without it a test
that needs it FAILS when ``HWAAC_REQUIRE_SONIC_TOOLKIT=1`` or ``CI=true`` (CI must not pass without SONiC's own
checks) and is skipped, with the reason, otherwise. Set it up with ``scripts/sonic-toolkit.sh``.
"""

from __future__ import annotations

import os

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
            pytest.fail(f"the SONiC toolkit is required here (HWAAC_REQUIRE_SONIC_TOOLKIT=1 or CI=true): {exc}",
                        pytrace=False)
        pytest.skip(f"SONiC toolkit not available: {exc}")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse to run when ``--dist loadgroup`` would not keep an ``xdist_group`` on one worker (pytest-xdist puts
    the group in the nodeid; a pytest that ignores that would split the twin modules over both workers)."""
    if not getattr(config.option, "loadgroup", False):
        return
    lost = [i.nodeid for i in items if i.get_closest_marker("xdist_group") and "@" not in i.nodeid]
    if lost:
        raise pytest.UsageError(f"--dist loadgroup has no effect with pytest {pytest.__version__} and this "
                                f"pytest-xdist ({lost[0]} carries no group): pin pytest as pyproject.toml does")
