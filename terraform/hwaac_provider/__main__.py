"""Entry point Terraform runs: ``python -m hwaac_provider`` (``--dev`` serves for reattach and prints
``TF_REATTACH_PROVIDERS``)."""

from __future__ import annotations

import importlib
import sys

# Every hwaac module the resources and data sources import inside their methods, imported once before the
# provider serves: it answers Terraform's calls on several threads, and two threads importing a package and one
# of its submodules at the same moment can be handed a partially initialised module (CPython accepts one rather
# than deadlock: importlib/_bootstrap.py, _lock_unlock_module). tests/unit/test_terraform_provider.py checks the
# list against the provider's code.
PRELOAD = (
    "hwaac.model.intent",
    "hwaac.model.limits",
    "hwaac.model.loader",
    "hwaac.netbox.plane_state",
    "hwaac.netbox.pools",
    "hwaac.netbox.sync",
    "hwaac.netbox.sync.client",
    "hwaac.plan.diff",
    "hwaac.plan.model",
    "hwaac.plan.serialize",
    "hwaac.validate",
)


def main(argv: list[str] | None = None) -> None:
    from tf import provider as tf_provider
    from tf import runner

    from hwaac_provider.provider import HwaacProvider
    from hwaac_provider.servicer import Servicer

    for name in PRELOAD:
        importlib.import_module(name)
    tf_provider.ProviderServicer = Servicer  # type: ignore[misc]  # run_provider builds the class it finds here
    runner.run_provider(HwaacProvider(), argv or sys.argv)


if __name__ == "__main__":
    main()
