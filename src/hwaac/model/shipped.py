"""A small YAML file hwaac ships a default of in a package's ``data/`` folder, which a user may replace with a
file of their own (the mitigation policy, the SLOs): one reader for both cases, and one way to parse and validate
such a file into a pydantic model."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from hwaac.errors import IntentError, IntentIssue
from hwaac.model.issues import plain, validation_issues
from hwaac.model.loader import parse_yaml
from hwaac.model.yamlfile import LineIndex


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


def load_yaml_model[M: BaseModel](
    text: str,
    file: str,
    model: type[M],
    error: type[IntentError],
    checks: Callable[[M, LineIndex, str], list[IntentIssue]] | None = None,
    before: Callable[[Any, str], None] | None = None,
) -> M:
    """``text`` parsed (:func:`~hwaac.model.loader.parse_yaml`), validated as ``model``, then checked by
    ``checks(value, index, file)`` for what the schema cannot say; ``before(root, file)`` may refuse the parsed
    document before validation.

    Raises:
        IntentError: ``error`` with the issues, naming ``file`` and the lines.
    """
    root, index = parse_yaml(text, file, error)
    if before is not None:
        before(root, file)
    try:
        value = model.model_validate(plain(root))
    except ValidationError as err:
        raise error(validation_issues(err, index, file)) from None
    issues = checks(value, index, file) if checks is not None else []
    if issues:
        raise error(issues)
    return value
