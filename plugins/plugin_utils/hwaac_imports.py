# Copyright: hwaac maintainers
# Apache License 2.0 (see galaxy.yml)
"""The hwaac package (this collection's Python core, the same version) as the controller-side plugins import it:
a missing package is reported when a plugin runs, so that ansible-doc and ansible-test's import test work
without it."""

from __future__ import annotations

from types import TracebackType


class HwaacImports:
    """``with HwaacImports() as HWAAC:`` around a plugin's ``hwaac`` imports: an ImportError is kept in ``error``
    for :meth:`require` to report when the plugin runs."""

    def __init__(self) -> None:
        self.error: ImportError | None = None

    def __enter__(self) -> HwaacImports:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, trace: TracebackType | None
    ) -> bool:
        if isinstance(exc, ImportError):
            self.error = exc
            return True
        return False

    def require(self, who: str, error: type[Exception]) -> None:
        """Raise ``error`` when the imports failed: ``<who> the hwaac Python package on the controller ...``
        (``who``: ``aiinfra.hwaac.<name> needs``)."""
        if self.error is not None:
            raise error(
                f"{who} the hwaac Python package on the controller "
                f"(pip install hwaac, the version of this collection): {self.error}"
            )
