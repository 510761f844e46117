"""Parse an intent file with line numbers and validate it against the schema (semantic rules: hwaac.validate).

Line numbers come from the YAML nodes (:mod:`hwaac.model.yamlfile`: libyaml, the YAML 1.2 core schema); schema
errors from pydantic are mapped back to those lines so that every message names file, line and field path.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from pydantic import ValidationError
from ruamel.yaml import YAML

from hwaac.errors import IntentError, IntentIssue
from hwaac.model.intent import Intent, SwitchModel
from hwaac.model.issues import dotted
from hwaac.model.limits import MAX_ISSUES
from hwaac.model.patterns import HOSTNAME, HOSTNAME_VALID, SLUG, SLUG_VALID
from hwaac.model.yamlfile import LineIndex, load_yaml


@cache
def builtin_switch_models() -> dict[str, SwitchModel]:
    """The switch model catalog shipped with hwaac (``hwaac/model/catalog/switch_models.yml``)."""
    text = resources.files("hwaac.model").joinpath("catalog/switch_models.yml").read_text()
    raw = YAML(typ="safe").load(text)
    return {name: SwitchModel.model_validate(spec) for name, spec in raw.items()}


# pydantic appends the member of a union that failed to loc (e.g. 'str' or 'NetBoxPrefixRef'); not a field
UNION_TAGS = frozenset({"int", "str", "float", "bool", "NetBoxPrefixRef"})
PATTERN_VALID = {HOSTNAME: HOSTNAME_VALID, SLUG: SLUG_VALID}
POOL_VALID = "an IPv4 prefix such as 10.0.0.0/16, or a NetBox pool {netbox_role: <role slug>, site: <slug>}"


def _schema_issues(err: ValidationError, index: LineIndex) -> list[IntentIssue]:
    issues: list[IntentIssue] = []
    seen: set[str] = set()
    errors = err.errors(include_url=False)
    for n, e in enumerate(errors):
        if len(issues) == MAX_ISSUES:
            issues.append(
                IntentIssue(
                    path="",
                    message=f"{len(errors) - n} more schema problem(s) not listed",
                    valid="fix the ones above first",
                    file=index.file,
                )
            )
            break
        raw = [k for k in e["loc"] if not (isinstance(k, str) and k.startswith("function-"))]
        tags = [k for k in raw if k in UNION_TAGS]
        loc = [k for k in raw if k not in UNION_TAGS]
        if "NetBoxPrefixRef" in tags:
            # a pool field failed as a NetBox reference: report that member's errors only if the user wrote a
            # mapping (meant a reference), else one "not a pool" from the prefix member below
            field = raw[: raw.index("NetBoxPrefixRef")] if "NetBoxPrefixRef" in raw else loc
            if not isinstance(index.value_at([k for k in field if k not in UNION_TAGS]), Mapping):
                continue
        elif tags == ["str"] and _is_pool_path(loc) and isinstance(index.value_at(loc), Mapping):
            continue
        value = e.get("input") if e["type"] != "missing" else None
        valid = ""
        if e["type"] == "extra_forbidden":
            known = sorted(getattr(_model_at(loc[:-1]), "model_fields", {}))
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            msg = f"unknown field {loc[-1]!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
            valid = "one of " + ", ".join(known) if known else ""
            value = None
        elif e["type"] == "missing":
            msg = "required field is missing"
        elif tags == ["str"] and _is_pool_path(loc):
            msg, valid = "not a pool", POOL_VALID
        elif e["type"] == "string_pattern_mismatch":
            pattern = e.get("ctx", {}).get("pattern", "")
            msg, valid = "invalid value", PATTERN_VALID.get(pattern, f"text matching {pattern}")
        elif e["msg"].startswith("Input should be "):
            # pydantic says what it wanted ("Input should be 2 or 3", "... a valid integer"): that is the 'valid'
            msg = "invalid value"
            valid = e["msg"].removeprefix("Input should be ")
        else:
            msg = e["msg"]
        if isinstance(value, Mapping | list):
            value = index.value_at(loc)
            if isinstance(value, Mapping | list):
                value = f"<{type(value).__name__}>"
        path = dotted(loc)
        if path in seen:
            continue  # a union field can report the same path for several members; one message is enough
        seen.add(path)
        issues.append(
            IntentIssue(path=path, message=msg, value=value, valid=valid, file=index.file, line=index.line_of(loc))
        )
    return issues


def _is_pool_path(loc: Sequence[str | int]) -> bool:
    return bool(loc) and loc[0] == "addressing"


def _model_at(path: Sequence[str | int]) -> type | None:
    """The pydantic model class that validates the mapping at ``path`` (for listing valid keys)."""
    model: Any = Intent
    for key in path:
        if isinstance(key, int):
            continue
        fields = getattr(model, "model_fields", None)
        if fields is None:
            return None
        if key not in fields:
            # a dict[str, Model] level (switch_models): the key is a user-chosen name, the model stays
            if model is Intent:
                return None
            continue
        ann = fields[key].annotation
        model = _unwrap(ann)
    return model if hasattr(model, "model_fields") else None


def _unwrap(ann: Any) -> Any:
    for arg in getattr(ann, "__args__", ()) or ():
        if hasattr(arg, "model_fields"):
            return arg
        inner = _unwrap(arg)
        if hasattr(inner, "model_fields"):
            return inner
    return ann


def parse_yaml(text: str, file: str, error: type[IntentError] = IntentError) -> tuple[Any, LineIndex]:
    """YAML text as plain data with the line of every key (:func:`hwaac.model.yamlfile.load_yaml`). Raises
    ``error`` (an :class:`IntentError`) naming file and line when the text is not YAML or breaks a limit of
    :mod:`hwaac.model.limits`."""
    return load_yaml(text, file, error)


def require_mapping(root: object, file: str, what: str, keys: str, error: type[IntentError] = IntentError) -> None:
    """Raise ``error`` at line 1 of ``file`` when the YAML document ``root`` is not a mapping: the ``what`` (intent,
    policy, ...) must be one, with ``keys``; checked before pydantic, whose message would not name the keys."""
    if not isinstance(root, Mapping):
        raise error(
            [
                IntentIssue(
                    path="",
                    message=f"the {what} must be a YAML mapping",
                    value=type(root).__name__,
                    valid=f"a mapping with keys {keys}",
                    file=file,
                    line=1,
                )
            ]
        )


def load_intent_text(text: str, file: str = "<string>") -> tuple[Intent, LineIndex]:
    """Parse and schema-validate intent YAML text. Raises :class:`IntentError` on any problem."""
    root, index = parse_yaml(text, file)
    require_mapping(root, file, "intent", "fabric, switches, addressing, ...")
    try:
        intent = Intent.model_validate(root)
    except ValidationError as err:
        raise IntentError(_schema_issues(err, index)) from None
    return intent, index


def locate(issue: IntentIssue, index: LineIndex) -> IntentIssue:
    """``issue`` with the file and line of its field path in ``index``. A key that holds dots (a sysctl name,
    ``host.sysctl.net.ipv4.conf.all.rp_filter``) is found as the longest run of tokens that the mapping has."""
    tokens: list[str | int] = []
    for token in issue.path.replace("]", "").replace("[", ".").split("."):
        if token:
            tokens.append(int(token) if token.isdigit() else token)
    parts: list[str | int] = []
    i = 0
    while i < len(tokens):
        node = index.value_at(parts)
        step = 1
        if isinstance(node, Mapping):
            for j in range(len(tokens), i + 1, -1):  # the longest dotted key present first
                if ".".join(map(str, tokens[i:j])) in node:
                    step = j - i
                    break
        parts.append(".".join(map(str, tokens[i : i + step])) if step > 1 else tokens[i])
        i += step
    return IntentIssue(
        path=issue.path,
        message=issue.message,
        value=issue.value,
        valid=issue.valid,
        file=index.file,
        line=index.line_of(parts),
        rule=issue.rule,
    )
