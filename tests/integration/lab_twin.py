"""A twin of a rendered fabric for the lab test modules, taken down whatever happens."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from hwaac.cli import main as hwaac_main
from hwaac.lab import Lab
from hwaac.lab.down import down
from hwaac.lab.status import converge
from hwaac.lab.up import up


@contextlib.contextmanager
def twin(render: Path, name: str, *, nodes_per_su: int | None = -1) -> Iterator[Lab]:
    """The lab ``name`` of the rendered fabric ``render`` (``nodes_per_su`` GPU nodes per SU, as ``hwaac lab up
    --nodes-per-su``; -1 the default), converged; taken down first (a run that was killed) and afterwards, also when
    a test fails."""
    down(name)
    try:
        built = up(render, name=name, nodes_per_su=nodes_per_su)
        converge(built, timeout=120)
        yield built
    finally:
        down(name)


@contextlib.contextmanager
def planned_twin(folder: Path, intent: Path, name: str) -> Iterator[Lab]:
    """:func:`twin` of ``intent`` as ``hwaac plan INTENT -o FOLDER/<intent's name>`` renders it."""
    render = folder / intent.name
    assert hwaac_main(["plan", str(intent), "-o", str(render)]) == 0
    with twin(render, name) as built:
        yield built
