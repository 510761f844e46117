"""A small YAML file hwaac ships a default of in a package's ``data/`` folder, which a user may replace with a
file of their own (the mitigation policy, the SLOs): one reader for both cases."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path


class ShippedFile[T]:
    """``<package>/data/<name>`` read with ``load_text(text, file)``, or a user's file in its place.

    Attributes:
        default: the shipped file, read once (cached).
    """

    def __init__(self, package: str, name: str, load_text: Callable[[str, str], T]) -> None:
        self._package = package
        self._name = name
        self._load_text = load_text
        self.default: Callable[[], T] = cache(self._read_default)

    def _read_default(self) -> T:
        text = resources.files(self._package).joinpath("data", self._name).read_text()
        return self._load_text(text, f"{self._package.replace('.', '/')}/data/{self._name}")

    def load(self, path: str | Path | None = None) -> T:
        """The file at ``path``, or the shipped default when None."""
        if path is None:
            return self.default()
        return self._load_text(Path(path).read_text(), str(path))
