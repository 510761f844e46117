"""An FRR configuration as statements: ``(context, line)`` pairs, comparable whatever the spacing or order.

Context is the enclosing block: "" at top level, ``router bgp 65001`` inside it, ``router bgp 65001 >
address-family ipv4 unicast`` in a family, ``route-map X permit 10`` in a route map. Whitespace runs become
one space; comments (``!``), blank lines and ``exit``/``exit-address-family`` are dropped. A block's opening line
is itself a top-level statement (so an empty ``route-map X permit 10`` is kept).
"""

from __future__ import annotations

BLOCKS = ("router ", "route-map ", "interface ", "vrf ", "line ", "key chain ", "bfd", "segment-routing")


def statements(text: str) -> list[tuple[str, str]]:
    """The statements of ``text`` in order."""
    out: list[tuple[str, str]] = []
    ctx: list[str] = []
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if not line or line.startswith("!"):
            continue
        indented = raw[:1].isspace()
        if line in ("exit-address-family", "exit-vrf"):
            ctx = ctx[:1]
            continue
        if line == "exit":
            ctx = []
            continue
        if not indented:
            ctx = [line] if line.startswith(BLOCKS) else []
            out.append(("", line))
        elif ctx and line.startswith("address-family "):
            ctx = [ctx[0], line]
        else:
            out.append((" > ".join(ctx), line))
    return out
