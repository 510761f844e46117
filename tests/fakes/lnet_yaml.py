"""The YAML of the fake ``bin/lnetctl``: its two printers (cYAML as liblnetconfig's ``cyaml.c`` prints, libyaml's
block emitter with indent 6 as the 2.16 Netlink paths print) and the block YAML subset ``lnetctl import`` reads.
Standard library only; the fake imports this file by path, as the other fakes import theirs."""

from __future__ import annotations

import re

# --- printers -----------------------------------------------------------------------------------------------------


def cyaml(tree: dict) -> str:
    """cyaml.c print_value/print_object/print_array/print_simple (INDENT 4, EXTRA_IND 2)."""
    out: list[str] = []

    def emit(key, value, level, first, extra):
        if isinstance(value, dict):
            if key is not None:
                ind = 4 * level if first else 4 * level + extra
                out.append(" " * ind + ("- " if first else "") + f"{key}:")
            c_level = level + 1 if key is not None else level
            c_first = first if key is None else False
            c_extra = 2 if first else extra
            for k, v in value.items():
                emit(str(k), v, c_level, c_first, c_extra)
                c_first = False
        elif isinstance(value, list):
            if key is not None:
                out.append(" " * (4 * level + extra) + f"{key}:")
            for item in value:
                emit(None, item, level + 1 if key is not None else level, True, 2)
        else:
            prefix = " " * (4 * level) + "- " if first else ""
            out.append(prefix + " " * (0 if first else 4 * level + extra) + f"{key}: {value}")

    emit(None, tree, 0, False, 0)
    return "".join(line + "\n" for line in out)


def _ly_scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, int):
        return str(value)
    text = str(value)
    lead = text[:1] in tuple("[]{}!&*#|>@`\"'%,") or (text[:1] in ("-", "?", ":") and text[1:2] in ("", " "))
    if lead or ": " in text or " #" in text or text != text.strip():
        return "'" + text.replace("'", "''") + "'"
    return text


def libyaml(tree: dict) -> str:
    """libyaml's block emitter with yaml_emitter_set_indent(6): sequences in a mapping are indentless, an item's
    first key follows ``-`` padded to the indent, empty values have no trailing space."""
    out: list[str] = []

    def entries(mapping, indent, first_prefix=None):
        for i, (k, v) in enumerate(mapping.items()):
            lead = first_prefix if i == 0 and first_prefix is not None else " " * indent
            if isinstance(v, dict):
                out.append(f"{lead}{k}:")
                entries(v, indent + 6)
            elif isinstance(v, list):
                out.append(f"{lead}{k}:")
                for item in v:
                    entries(item, indent + 6, " " * indent + "-" + " " * 5)
            else:
                s = _ly_scalar(v)
                out.append(f"{lead}{k}:" + (f" {s}" if s else ""))

    entries(tree, 0)
    return "".join(line + "\n" for line in out)


# --- import -------------------------------------------------------------------------------------------------------


def _scalar(text: str):
    text = text.strip()
    if text.startswith("! "):
        text = text[2:].strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1].replace("''", "'") if text[0] == "'" else text[1:-1]
    if re.match(r"^-?\d+$", text):
        return int(text)
    return text


def read_yaml(text: str):
    """The block YAML subset lnetctl reads and writes (mappings, dash sequences in both indent styles, plain and
    quoted scalars, full-line comments, ``---``/``...``)."""
    tokens: list[tuple[int, str | None]] = []  # (column, text) ; text None = a "-" item marker
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#") or raw.strip() in ("---", "..."):
            continue
        col = len(raw) - len(raw.lstrip(" "))
        body = raw.strip()
        while body.startswith("-") and (len(body) == 1 or body[1] == " "):
            tokens.append((col, None))
            rest = body[1:]
            col += 1 + (len(rest) - len(rest.lstrip(" ")))
            body = rest.strip()
        if body:
            tokens.append((col, body))

    def node(i):
        col, txt = tokens[i]
        return seq(i, col) if txt is None else mapping(i, col)

    def seq(i, col):
        items = []
        while i < len(tokens) and tokens[i] == (col, None):
            i += 1
            if i < len(tokens) and tokens[i][0] > col:
                val, i = node(i)
            else:
                val = None
            items.append(val)
        return items, i

    def mapping(i, col):
        out: dict = {}
        while i < len(tokens) and tokens[i][0] == col and tokens[i][1] is not None:
            txt = tokens[i][1]
            if ": " in txt:
                key, val = txt.split(": ", 1)
            elif txt.endswith(":"):
                key, val = txt[:-1], ""
            else:
                raise ValueError(f"not a mapping entry: {txt!r}")
            i += 1
            if val.strip():
                out[_scalar(key)] = _scalar(val)
            elif i < len(tokens) and (tokens[i][0] > col or tokens[i] == (col, None)):
                out[_scalar(key)], i = node(i)
            else:
                out[_scalar(key)] = None
        return out, i

    if not tokens:
        return {}
    value, end = node(0)
    if end != len(tokens):
        raise ValueError(f"unexpected indentation at {tokens[end][1]!r}")
    return value
