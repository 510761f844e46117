"""YAML text -> plain Python data and the line of every key, in time linear in the text.

libyaml (PyYAML's C parser and composer) reads the text, after :mod:`hwaac.model.limits` has bounded its size,
nesting and alias expansion. Scalars resolve by the YAML 1.2 core schema (YAML 1.2.2 section 10.3), as
ruamel.yaml and editors' YAML language servers read the file, not PyYAML's YAML 1.1 rules: ``yes``, ``no``,
``on``, ``off`` stay strings, ``010`` is ten, ``1:30`` a string. Integers must fit in 64 bits (the rendered JSON
files are written by orjson, which refuses larger ones). Only the core schema's tags are constructed
(``!!timestamp``, ``!!binary``, ``!!set`` and the like are refused), and a key written twice in one mapping is an
error, as it is for ruamel.yaml. Why libyaml and the figures: docs/intent-limits.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from hwaac.errors import IntentError
from hwaac.model.limits import check_text, check_yaml, yaml_issue

if TYPE_CHECKING:  # typed as the pure-Python loader: the same SafeConstructor and Resolver as libyaml's
    _BASE = yaml.SafeLoader
else:  # libyaml's parser when PyYAML was built with it
    _BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"

# YAML 1.2.2 section 10.3.2, "Tag Resolution" of the core schema
_INT_TEXT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT_TEXT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_SPECIAL_FLOATS = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}
# integers hwaac writes into JSON (orjson: 64 bits) and that every tool it configures reads: a signed 64-bit range
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}


class CoreLoader(_BASE):
    """libyaml's parser with the YAML 1.2 core schema's resolution and constructors (and ``<<`` merge keys)."""

    yaml_implicit_resolvers: dict = {}  # noqa: RUF012 (PyYAML's class-level registry)
    yaml_constructors: ClassVar[dict[str | None, Any]] = {}


for _tag, _regexp, _first in (
    (_BOOL, r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    (_INT, rf"^(?:{_INT_TEXT.pattern})$", "-+0123456789"),
    (_FLOAT, rf"^(?:{_FLOAT_TEXT.pattern}|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", "-+0123456789."),
    (_NULL, r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    (_MERGE, r"^(?:<<)$", "<"),
):
    CoreLoader.add_implicit_resolver(_tag, re.compile(_regexp), list(_first))


def _refuse(node: Node, what: str) -> ConstructorError:
    return ConstructorError(None, None, what, node.start_mark)


def _int(loader: CoreLoader, node: ScalarNode) -> int:
    text = loader.construct_scalar(node)
    if _INT_TEXT.fullmatch(text):
        base = {"0o": 8, "0x": 16}.get(text[:2], 10)
        try:
            value: int | None = int(text[2:] if base != 10 else text, base)
        except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
            value = None
        if value is not None and INT_MIN <= value <= INT_MAX:
            return value
        if value is not None:
            raise _refuse(node, f"integer {text[:40]} does not fit in 64 bits ({INT_MIN} to {INT_MAX})")
    raise _refuse(node, f"not an integer: {text[:40]!r}")


def _float(loader: CoreLoader, node: ScalarNode) -> float:
    text = loader.construct_scalar(node)
    special = _SPECIAL_FLOATS.get(text.lower())
    if special is not None:
        return special
    if _FLOAT_TEXT.fullmatch(text):
        return float(text)
    raise _refuse(node, f"not a number: {text[:40]!r}")


def _bool(loader: CoreLoader, node: ScalarNode) -> bool:
    text = loader.construct_scalar(node)
    if text in _BOOLS:
        return _BOOLS[text]
    raise _refuse(node, f"not true or false: {text[:40]!r}")


def _unknown(loader: CoreLoader, node: Node) -> Any:
    raise _refuse(node, f"unsupported tag {node.tag!r}; an intent uses plain values, lists and mappings")


_CONSTRUCTORS: tuple[tuple[str | None, Callable[[CoreLoader, Any], Any]], ...] = (
    (_NULL, _BASE.construct_yaml_null),
    (_BOOL, _bool),
    (_INT, _int),
    (_FLOAT, _float),
    (_STR, _BASE.construct_yaml_str),
    ("tag:yaml.org,2002:seq", _BASE.construct_yaml_seq),
    ("tag:yaml.org,2002:map", _BASE.construct_yaml_map),
    (None, _unknown),
)
for _node_tag, _constructor in _CONSTRUCTORS:  # None: every other tag
    CoreLoader.add_constructor(_node_tag, _constructor)


class LineIndex:
    """Maps a field path (tuple of keys and list indices) to the 1-based line where it is written."""

    def __init__(self, root: Any, node: Node | None, file: str):
        self.root = root
        self.file = file
        self._node = node
        self._keys: dict[int, dict[str, tuple[int, Node]]] = {}  # id(mapping node) -> key -> (line, value node)

    def _table(self, node: MappingNode) -> dict[str, tuple[int, Node]]:
        table = self._keys.get(id(node))
        if table is None:
            # merged (<<) pairs come first in a flattened mapping; the mapping's own keys override them
            table = {k.value: (k.start_mark.line + 1, v) for k, v in node.value if isinstance(k, ScalarNode)}
            self._keys[id(node)] = table
        return table

    def line_of(self, path: Sequence[str | int]) -> int:
        node, line = self._node, 1
        for key in path:
            if isinstance(node, MappingNode) and (hit := self._table(node).get(str(key))) is not None:
                line, node = hit
            elif isinstance(node, SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
                node = node.value[key]
                line = node.start_mark.line + 1
            else:
                # The field is missing: the line of the nearest enclosing mapping is the best pointer.
                break
        return line

    def value_at(self, path: Sequence[str | int]) -> Any:
        node = self.root
        for key in path:
            try:
                node = node[key]
            except (KeyError, IndexError, TypeError):
                return None
        return node


def _check_duplicate_keys(root: Node | None) -> None:
    """Raise on a mapping that writes a key twice (merged ``<<`` keys may be overridden; that is their use)."""
    seen: set[int] = set()
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            keys: dict[tuple[str, str], int] = {}
            for k, v in node.value:
                stack += (k, v)
                if isinstance(k, ScalarNode) and k.tag != _MERGE:
                    if (k.tag, k.value) in keys:
                        raise _refuse(k, f"duplicate key {k.value[:40]!r} (first on line {keys[k.tag, k.value]})")
                    keys[k.tag, k.value] = k.start_mark.line + 1
        elif isinstance(node, SequenceNode):
            stack += node.value


def load_yaml(text: str, file: str, error: type[IntentError] = IntentError) -> tuple[Any, LineIndex]:
    """Plain data (dicts, lists, str, int, float, bool, None) of one YAML document and its :class:`LineIndex`.

    Raises ``error`` (an :class:`IntentError`) naming the file and line when the text breaks a limit of
    :mod:`hwaac.model.limits` or is not YAML."""
    check_text(text, file, error)
    check_yaml(text, file, error)
    loader = CoreLoader(text)
    try:
        node = loader.get_single_node()
        _check_duplicate_keys(node)
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise error([yaml_issue(exc, file)]) from None
    finally:
        loader.dispose()
    return data, LineIndex(data, node, file)
