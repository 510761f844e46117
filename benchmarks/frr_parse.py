"""FRR JSON readers at leaf scale: ``show ip route json`` with thousands of prefixes and wide ECMP, and a 64-peer
``show bgp summary json`` (hwaac.telemetry.parsers.frr_routes / frr_bgp; docs/telemetry/frr.md).

Untimed: tables built in memory from the FRR 8.4 leaf recording (tests/fixtures/verify/recorded/healthy), its BGP
route entry cloned per prefix and its next hop per ECMP member, printed with FRR's separators. Timed (best of
--repeat): the reader on the text, ``json.loads`` alone, and the reader on the decoded document (its own loop).
Target: the loop small next to the decode (about 1 µs a next hop); a 64-peer summary well under 1 ms.

    .venv/bin/python benchmarks/frr_parse.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import copy
import json
import timeit
from pathlib import Path
from typing import Any

from hwaac.telemetry.parsers.frr_bgp import parse_bgp_summary
from hwaac.telemetry.parsers.frr_routes import parse_routes

RECORDED = Path(__file__).parents[1] / "tests/fixtures/verify/recorded/healthy/leaf-p0-su01-r0.json"
SIZES = [(512, 4), (4096, 32), (16384, 64)]


def _outputs() -> dict[str, Any]:
    return json.loads(RECORDED.read_text())["outputs"]


def route_table(prefixes: int, width: int) -> str:
    entry = json.loads(_outputs()["vtysh -c 'show ip route json'"]["stdout"])["10.0.0.2/32"][0]
    hop = entry["nexthops"][0]
    table = {}
    for i in range(prefixes):
        prefix = f"172.{16 + i // 65536}.{(i // 256) % 256}.{i % 256}/32"
        e = copy.deepcopy(entry)
        e["prefix"] = prefix
        e["nexthops"] = [
            {**hop, "ip": f"10.1.{j // 128}.{(j % 128) * 2}", "interfaceName": f"Ethernet{8 + 4 * j}"}
            for j in range(width)
        ]
        table[prefix] = [e]
    return json.dumps(table, indent=2, separators=(",", ":"))


def bgp_summary(peers: int) -> str:
    doc = json.loads(_outputs()["vtysh -c 'show bgp summary json'"]["stdout"])
    peer = doc["ipv4Unicast"]["peers"]["10.1.0.0"]
    doc["ipv4Unicast"]["peers"] = {f"10.1.{i // 128}.{(i % 128) * 2}": dict(peer) for i in range(peers)}
    return json.dumps(doc, indent=2, separators=(",", ":"))


def best(fn: Any, number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    bad = 0
    for prefixes, width in SIZES:
        text = route_table(prefixes, width)
        doc = json.loads(text)
        n = max(1, 20 // (prefixes * width // 2048 + 1))
        t_text = best(lambda text=text: parse_routes(text), n, args.repeat)
        t_json = best(lambda text=text: json.loads(text), n, args.repeat)
        t_loop = best(lambda doc=doc: parse_routes(doc), n, args.repeat)
        table = parse_routes(text)
        ok = len(table.routes) == prefixes and all(r.ecmp == width for r in table.routes.values())
        bad += not ok
        print(
            f"routes {prefixes} x {width} next hops, {len(text) / 1e6:.1f} MB: {t_text * 1e3:.0f} ms "
            f"(json.loads {t_json * 1e3:.0f} ms, loop {t_loop * 1e3:.0f} ms = "
            f"{t_loop / (prefixes * width) * 1e9:.0f} ns a next hop){'' if ok else '  WRONG'}"
        )
    summary = bgp_summary(64)
    t = best(lambda: parse_bgp_summary(summary), 1000, args.repeat)
    ok = len(parse_bgp_summary(summary).peers) == 64
    bad += not ok
    print(f"bgp summary 64 peers: {t * 1e3:.3f} ms a parse (1,000 parses){'' if ok else '  WRONG'}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
