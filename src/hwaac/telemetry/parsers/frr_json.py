"""The JSON documents of one FRR ``vtysh ... json`` output, for the FRR readers (:mod:`.frr_bgp`, :mod:`.frr_routes`).

vtysh prints one document per ``-c`` one after the other, and FRR up to 10.0 prints ``show ip route vrf all json``
as one document per VRF (``zebra_vty.c`` ``show_route``; one object keyed by VRF since 10.1), so an output may hold
several documents.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from hwaac.telemetry.parsers import json_text

_DECODER = json.JSONDecoder()


def documents(raw: str | bytes | Mapping[str, Any]) -> tuple[list[Any], str]:
    """The documents of ``raw`` in order, and why the rest could not be read ("" when all was read).

    ``raw`` may be the output text or one document already decoded (an object). Never raises.
    """
    if isinstance(raw, Mapping):
        return [raw], ""
    if isinstance(raw, (bytes, bytearray)):
        raw = raw.decode("utf-8", "replace")
    if not isinstance(raw, str):
        return [], f"not text but {type(raw).__name__}"
    text = raw.strip()
    if not text:
        return [], "empty output"
    try:
        return [json_text.loads(text)], ""  # the common case: one document
    except json.JSONDecodeError:
        pass
    except RecursionError:
        return [], "JSON nested too deep"
    docs: list[Any] = []
    i, end = 0, len(text)
    while i < end:
        try:
            doc, i = _DECODER.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            line = text[i:].lstrip().split("\n", 1)[0]
            where = f"document {len(docs) + 1}, line {exc.lineno} column {exc.colno}"
            return docs, f"not JSON ({where}: {exc.msg}): {line[:120]!r}"
        except RecursionError:
            return docs, f"document {len(docs) + 1}: JSON nested too deep"
        docs.append(doc)
        while i < end and text[i].isspace():
            i += 1
    return docs, ""


class Reading(Protocol):
    """A reader's result: its reasons, and whether any document was read."""

    unknown: list[str]
    parsed: bool


def read_documents(
    out: Reading,
    raw: str | bytes | Mapping[str, Any],
    read: Callable[[Mapping[str, Any]], int],
    items: str,
    not_this: str,
) -> None:
    """Each document of ``raw`` given to ``read`` (which returns how many ``items`` it read); ``out.parsed`` when one
    held some, or held none to read (``{}`` or VRFs without any); else the reason ``not_this``."""
    docs, why = documents(raw)
    if why:
        out.unknown.append(why)
    for doc in docs:
        if not isinstance(doc, Mapping):
            out.unknown.append(f"top level is a JSON {type(doc).__name__}, not an object of {items}")
            continue
        if read(doc) or all(isinstance(v, Mapping) and not v for v in doc.values()):
            out.parsed = True
        else:
            out.unknown.append(not_this)


__all__ = ["documents", "read_documents"]
