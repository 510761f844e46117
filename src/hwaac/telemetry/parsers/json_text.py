"""JSON text decoded by orjson (a dependency of hwaac, two to three times faster on the big dumps of a sweep) where
it gives what the standard library gives, else by the standard library, whose result or error is then the answer:
orjson refuses NaN, Infinity, lone surrogates and numbers out of a double's range, and turns integers outside 64 bits
into floats, so a text with a run of 19 digits (an integer that may be that large) goes to the standard library."""

from __future__ import annotations

import json
from typing import Any

import orjson

# ASCII digits to "9", every other ASCII character to ".": a run of 19 digits becomes "9" * 19 (one C pass; a regex
# for it tries every digit of a counter dump and is slower than the decoding it guards)
_DIGITS = str.maketrans({chr(c): "9" if "0" <= chr(c) <= "9" else "." for c in range(128)})
_LONG = "9" * 19


def loads(text: str) -> Any:
    """``json.loads(text)``: the same document, or the same exception."""
    if _LONG not in text.translate(_DIGITS):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def loads_quick(text: str) -> Any:
    """:func:`loads` without its pass over the digits: the same document, except that an integer outside 64 bits
    may come as a float. For the frame readers, which take a float where a count or an integer is due as a reason
    to leave the output to its parser (:mod:`hwaac.telemetry.frames`). Raises as :func:`loads`."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def loads_frame(raw: str | bytes) -> Any:
    """What a frame reader decodes: :func:`loads_quick` of text; of a file's bytes (UTF-8), orjson alone, faster
    than from the decoded text. ValueError where orjson refuses the bytes (invalid UTF-8, NaN, another encoding the
    standard library would guess) or ``raw`` is neither: the reader then leaves the output to its parser, which
    reads the text as decoded."""
    if type(raw) is str:
        return loads_quick(raw)
    if type(raw) is not bytes:
        raise ValueError(f"{type(raw).__name__}, not text or bytes")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError(str(exc)) from None


__all__ = ["loads", "loads_frame", "loads_quick"]
