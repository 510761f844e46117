"""Scale benchmark of ``hwaac review``: an MTU change that reaches every device of a 3-tier fabric.

Prints the devices that change, the seconds to build the review (both plans planned and rendered, compared per
device), the sizes of review.md and review.json, and the peak RSS. Targets: the comment under 60,000 characters
whatever the size; a 1,000-device change reviewed in under a minute on 2 cores.

    .venv/bin/python benchmarks/review_scale.py [--sus 32]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import yaml
from plan_scale import scale_intent

from hwaac.review import build_review, from_file, render_markdown


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sus", type=int, default=32, help="scalable units of 32 nodes (default 32: 1,024 nodes)")
    args = ap.parse_args()
    doc = scale_intent(args.sus).model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    with tempfile.TemporaryDirectory() as tmp:
        old, new = Path(tmp) / "old.yml", Path(tmp) / "new.yml"
        old.write_text(yaml.safe_dump({**doc, "qos": {"switch_mtu": 9100, "host_mtu": 9000}}))
        new.write_text(yaml.safe_dump({**doc, "qos": {"switch_mtu": 9000, "host_mtu": 4200}}))
        t0 = time.perf_counter()
        review = build_review(from_file(old), from_file(new))
        t_build = time.perf_counter() - t0
        md = render_markdown(review)
        t_all = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"fabric: {args.sus} SUs; devices that change: {len(review['devices'])}")
    print(f"review built in {t_build:.1f} s; with the Markdown {t_all:.1f} s")
    print(f"review.md: {len(md):,} characters; review.json: {len(json.dumps(review, indent=2)):,} characters")
    print(f"peak RSS: {rss / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
