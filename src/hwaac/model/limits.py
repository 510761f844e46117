"""Limits on an intent file before it is parsed: size, encoding, characters, YAML nesting and alias expansion.

An intent is a hand-written file of a few kilobytes; these limits keep a hostile or broken one (a binary file,
a "billion laughs" alias bomb, thousands of nested brackets) from costing more than a clear error. Figures and
reasons: docs/intent-limits.md.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

import yaml

from hwaac.errors import IntentError, IntentIssue

MAX_BYTES = 1 << 20  # 1 MiB: the largest example intent is ~5 KB
MAX_DEPTH = 32  # nested mappings/sequences; the intent schema itself is 6 deep
MAX_NODES = 200_000  # YAML nodes after expanding every alias (each alias counts as the size of its anchor)
MAX_ISSUES = 100  # schema problems listed; the rest are counted

# Size of the planned fabric (checked by hwaac.plan.rules before anything is enumerated): room for the largest
# fabric the catalog's 128-port switches build in 3 tiers on one plane (1,024 SUs of 32 8-GPU nodes: 262,144
# GPUs, 47,104 devices, 786,432 links, 178,181 files)
MAX_DEVICES = 65_536  # switches and nodes
MAX_LINKS = 1_048_576  # cables
MAX_FILES = 262_144  # files rendered by hwaac plan
FILES_PER_NODE = 5  # netplan, sysctl, nic-roce.json, nccl.env, lustre-client.json (hwaac.render.host)

# C0 controls but tab, LF and CR, DEL, the C1 controls (NEL included: YAML would count it as a line break that
# editors do not show) and lone surrogates: YAML 1.2 section 5.1 allows them only escaped in a quoted string
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when PyYAML was built with it

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def _fail(
    file: str,
    message: str,
    value: object = None,
    valid: str = "",
    line: int = 0,
    error: type[IntentError] = IntentError,
) -> IntentError:
    return error([IntentIssue(path="", message=message, value=value, valid=valid, file=file, line=line)])


def read_text(path: str | Path, error: type[IntentError] = IntentError) -> str:
    """The text of the intent file ``path``, checked by :func:`check_text`.

    Raises:
        FileNotFoundError: there is no such file (the CLI's usage error).
        ``error`` (an :class:`IntentError`): a folder or other non-regular file, unreadable, over
            :data:`MAX_BYTES`, not UTF-8 (the line of the first bad byte) or with control characters.
    """
    p = Path(path)
    file = str(p)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _fail(
            file, f"cannot read the file ({exc.strerror or exc})", valid="a readable YAML file", error=error
        ) from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise _fail(file, f"is {kind}", valid="a YAML file (fabric.yml)", error=error)
    if st.st_size > MAX_BYTES:
        raise _fail(file, "file too large", f"{st.st_size} bytes", f"at most {MAX_BYTES} bytes (1 MiB)", error=error)
    try:
        with p.open("rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise _fail(
            file, f"cannot read the file ({exc.strerror or exc})", valid="a readable YAML file", error=error
        ) from None
    return decode_text(data, file, error)


def decode_text(data: bytes, file: str, error: type[IntentError] = IntentError) -> str:
    """The intent text of ``data`` (a file's bytes, or a git blob's), checked by :func:`check_text`.

    Raises:
        ``error`` (an :class:`IntentError`): over :data:`MAX_BYTES`, not UTF-8 (the line of the first bad byte) or
            with control characters.
    """
    if len(data) > MAX_BYTES:  # grew since stat, or a special file that reports size 0
        raise _fail(
            file, "file too large", f"over {MAX_BYTES} bytes", f"at most {MAX_BYTES} bytes (1 MiB)", error=error
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _fail(
            file,
            f"not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})",
            valid="a UTF-8 text file (YAML); save it as UTF-8",
            line=line,
            error=error,
        ) from None
    check_text(text, file, error)
    return text


def check_text(text: str, file: str, error: type[IntentError] = IntentError) -> None:
    """Refuse text over :data:`MAX_BYTES` characters or with a control character other than tab, LF and CR
    (a NUL, an escape sequence: the file is binary or damaged), naming the first one's line and column."""
    if len(text) > MAX_BYTES:
        raise _fail(file, "intent too large", f"{len(text)} characters", f"at most {MAX_BYTES} (1 MiB)", error=error)
    bad = _CONTROL.search(text)
    if bad is not None:
        i, ch = bad.start(), bad.group()
        line = text.count("\n", 0, i) + 1
        column = i - (text.rfind("\n", 0, i) + 1) + 1
        raise _fail(
            file,
            f"control character U+{ord(ch):04X} at column {column}",
            repr(ch),
            "printable text; tab, line feed and carriage return are the only control characters allowed "
            "(write others escaped in a double-quoted string, e.g. \"\\x1b\")",
            line=line,
            error=error,
        )


def _line(event: yaml.Event) -> int:
    """The 1-based line an event of the parser starts on (the parser marks every event it makes)."""
    mark = event.start_mark
    assert mark is not None
    return mark.line + 1


def check_yaml(text: str, file: str, error: type[IntentError] = IntentError) -> None:
    """Refuse YAML nested deeper than :data:`MAX_DEPTH`, with more than :data:`MAX_NODES` nodes once every
    alias is expanded, or with a recursive alias (a value that contains itself), from the parser's events,
    before anything is composed (the composer recurses per level, and an alias bomb is small as text but huge
    once its aliases are followed).

    A YAML syntax error is refused here too, at its line.
    """
    depth = 0
    nodes = 0
    sizes: dict[str | None, int] = {}  # anchor -> nodes under it, aliases expanded (never None)
    starts: list[tuple[str | None, int]] = []  # open collections: (anchor, node count at their start)
    try:
        for event in yaml.parse(text, Loader=_LOADER):
            if isinstance(event, yaml.AliasEvent):
                if any(anchor == event.anchor for anchor, _ in starts):
                    raise _fail(
                        file,
                        f"alias *{event.anchor} refers to a mapping or list that contains it",
                        f"*{event.anchor}",
                        "an alias of a value that is complete where the alias is used",
                        line=_line(event),
                        error=error,
                    )
                nodes += sizes.get(event.anchor, 1)
            elif isinstance(event, yaml.ScalarEvent):
                nodes += 1
                if event.anchor is not None:
                    sizes[event.anchor] = 1
            elif isinstance(event, yaml.CollectionStartEvent):
                nodes += 1
                depth += 1
                if depth > MAX_DEPTH:
                    raise _fail(
                        file,
                        "YAML nested too deeply",
                        f"more than {MAX_DEPTH} levels",
                        f"at most {MAX_DEPTH} nested mappings or lists",
                        line=_line(event),
                        error=error,
                    )
                starts.append((event.anchor, nodes - 1))
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
                anchor, start = starts.pop()
                if anchor is not None:
                    sizes[anchor] = nodes - start
            else:
                continue
            if nodes > MAX_NODES:
                raise _fail(
                    file,
                    "too many YAML values (an alias counts as often as it is used)",
                    f"more than {MAX_NODES}",
                    f"at most {MAX_NODES} values (an intent has a few hundred)",
                    line=_line(event),
                    error=error,
                )
    except yaml.YAMLError as exc:
        raise error([yaml_issue(exc, file)]) from None


def yaml_issue(exc: Exception, file: str) -> IntentIssue:
    """The issue of a YAML syntax error (PyYAML's or ruamel.yaml's), at its line when the parser gave one."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else 0
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return IntentIssue(
        path="",
        message=f"not valid YAML: {problem}",
        file=file,
        line=line,
        valid="YAML syntax (https://yaml.org/spec/1.2.2/)",
    )
