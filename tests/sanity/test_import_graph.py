"""No import cycle between hwaac's packages, read from the source (every ``import``, also inside functions).

A node is a direct child of ``src/hwaac`` (a package or a module); ``hwaac/__init__.py`` and ``hwaac/cli.py`` are
the top and may import anything, but nothing below imports them. Cycles are the strongly connected components
of the graph (Tarjan, "Depth-first search and linear graph algorithms", SIAM J. Comput. 1972).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
TOP = {"hwaac", "hwaac.cli"}  # the public API and the command: above every package

Edges = dict[tuple[str, str], list[str]]  # (from node, to node) -> "file:line imported.name", one per import


def _imports(path: Path, src: Path) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of every import in ``path``, relative ones resolved; ``from m import n`` gives ``m.n``."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    package = parts[:-1]  # the package a relative import starts from (for __init__.py: the package itself)
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                yield node.lineno, f"{module}.{alias.name}"


def _node(dotted: str, src: Path) -> str | None:
    """The graph node of a dotted name inside hwaac (``hwaac.x`` for ``hwaac.x.y.z``), ``hwaac``/``hwaac.cli`` for
    the top, None outside hwaac."""
    parts = dotted.split(".")
    if parts[0] != "hwaac":
        return None
    child = src / "hwaac" / parts[1] if len(parts) > 1 else None
    if child is None or parts[1] == "__init__" or not (child.is_dir() or child.with_suffix(".py").is_file()):
        return "hwaac"  # the package itself, or a name it exports
    return f"hwaac.{parts[1]}"


def import_graph(src: Path = SRC) -> Edges:
    """Every import between two different nodes of ``src/hwaac``, with where it is written."""
    edges: Edges = defaultdict(list)
    for path in sorted((src / "hwaac").rglob("*.py")):
        here = _node(".".join(path.relative_to(src).with_suffix("").parts), src)
        assert here is not None
        for line, name in _imports(path, src):
            there = _node(name, src)
            if there is not None and there != here:
                edges[(here, there)].append(f"{path.relative_to(src)}:{line} {name}")
    return edges


def cycles(edges: Edges) -> list[list[str]]:
    """The strongly connected components of more than one node, each sorted (Tarjan's algorithm)."""
    succ: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        succ[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(succ[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            if component:
                found.append(sorted([v, *component]))

    for v in sorted({n for edge in edges for n in edge}):
        if v not in index:
            visit(v)
    return found


def _explain(component: list[str], edges: Edges) -> str:
    lines = [f"import cycle between {', '.join(component)}:"]
    for (a, b), where in sorted(edges.items()):
        if a in component and b in component:
            lines.append(f"  {a} -> {b}: " + "; ".join(where[:3]) + (f" (+{len(where) - 3})" if len(where) > 3 else ""))
    return "\n".join(lines)


def test_no_import_cycle_between_packages() -> None:
    edges = {edge: where for edge, where in import_graph().items() if edge[0] not in TOP}
    found = cycles(edges)
    assert not found, "\n".join(_explain(c, edges) for c in found)


def test_nothing_below_imports_the_top() -> None:
    edges = import_graph()
    up = [w for (a, b), where in sorted(edges.items()) if b in TOP and a not in TOP for w in where]
    assert not up, "imports of hwaac or hwaac.cli from below them:\n  " + "\n  ".join(up)


def test_a_cycle_is_named_with_its_lines(tmp_path: Path) -> None:
    """The checker itself: two packages importing each other (one lazily) are found, with file and line."""
    for pkg, other in (("a", "b"), ("b", "a")):
        (tmp_path / "hwaac" / pkg).mkdir(parents=True)
        (tmp_path / "hwaac" / pkg / "__init__.py").write_text("")
        (tmp_path / "hwaac" / pkg / "m.py").write_text(f"def f():\n    from hwaac.{other} import m\n")
    (tmp_path / "hwaac" / "__init__.py").write_text("")
    edges = import_graph(tmp_path)
    assert cycles(edges) == [["hwaac.a", "hwaac.b"]]
    assert "hwaac/a/m.py:2 hwaac.b.m" in _explain(["hwaac.a", "hwaac.b"], edges)
