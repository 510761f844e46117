"""Intent loading time at the size limit: 1 MiB intents of several shapes through validation (hwaac.validate).

Prints, per shape: bytes, YAML values, seconds to load and validate (best of --repeat), and the outcome (ok or the
first issue). Target: linear in the size, a few seconds at 1 MiB on a 2-core machine (docs/intent-limits.md).

    .venv/bin/python benchmarks/intent_parse.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from hwaac.errors import IntentError
from hwaac.model.limits import MAX_BYTES
from hwaac.validate import load_intent_source

MINIMAL = (Path(__file__).parents[1] / "tests" / "fixtures" / "intents" / "valid" / "minimal.yml").read_text()


def _fill(head: str, line: str) -> str:
    """``MINIMAL`` + ``head`` + as many ``line`` as fit in 1 MiB."""
    room = MAX_BYTES - len(MINIMAL) - len(head)
    return MINIMAL + head + line * (room // len(line))


SHAPES = {
    "comments": lambda: _fill("", "# " + "x" * 77 + "\n"),
    "list items (qos.roce_dscp)": lambda: _fill("qos:\n  roce_dscp:\n", "  - 26\n"),
    "flow list": lambda: _fill("qos:\n  pfc_priorities: [", "3, ")[:-2] + "]\n",
    "mapping keys (host.nccl_env)": lambda: (
        MINIMAL
        + "host:\n  nccl_env:\n"
        + "".join(f"    NCCL_K{i}: v\n" for i in range((MAX_BYTES - len(MINIMAL) - 20) // 19))
    ),
    "unknown keys (each an error)": lambda: (
        MINIMAL + "".join(f"k{i:06d}: 1\n" for i in range((MAX_BYTES - len(MINIMAL)) // 11))
    ),
    "one long string": lambda: MINIMAL.replace("site: lab", "site: " + "x" * (MAX_BYTES - len(MINIMAL) - 10)),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"| shape | bytes | seconds (best of {args.repeat}) | outcome |")
    print("|---|---|---|---|")
    for name, make in SHAPES.items():
        text = make()
        assert len(text.encode()) <= MAX_BYTES, name
        best, outcome = float("inf"), "ok"
        for _ in range(args.repeat):
            start = time.perf_counter()
            try:
                load_intent_source(text, "bench.yml")
            except IntentError as exc:
                outcome = f"{len(exc.issues)} issue(s): {str(exc.issues[0])[:70]}"
            best = min(best, time.perf_counter() - start)
        print(f"| {name} | {len(text.encode()):,} | {best:.2f} | {outcome} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
