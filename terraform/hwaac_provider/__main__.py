"""Entry point Terraform runs: ``python -m hwaac_provider`` (``--dev`` serves for reattach and prints
``TF_REATTACH_PROVIDERS``)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    from tf import provider as tf_provider
    from tf import runner

    from hwaac_provider.provider import HwaacProvider
    from hwaac_provider.servicer import Servicer

    tf_provider.ProviderServicer = Servicer  # type: ignore[misc]  # run_provider builds the class it finds here
    runner.run_provider(HwaacProvider(), argv or sys.argv)


if __name__ == "__main__":
    main()
