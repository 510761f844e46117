"""Terraform benchmark: the provider aiinfra/hwaac (from its local mirror) against the local NetBox.

For the demo fabric, or with ``--sus N`` the demo grown to N SUs, on a fresh NetBox database: one
``hwaac_fabric_plane`` per plane; prints the seconds of ``terraform init``, the first ``plan``, the first
``apply`` (the sync into NetBox) and the no-op ``plan -detailed-exitcode`` (refresh reads NetBox back, then
plans; best and median of ``--repeat`` runs). Target: the no-op plan of the 16-SU fabric <= 15 s.

    .venv/bin/python benchmarks/terraform_plan.py [--sus 16] [--repeat 3]

The first apply of 16 SUs takes long on 2 cores (NetBox instantiates ~130 interfaces per device).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from demo_fabric import demo_intent_text

from hwaac.devnetbox.local import LocalNetBox
from hwaac.netbox.plane_state import plan_from_text
from hwaac_provider.mirror import build_mirror

MAIN_TF = """
terraform {
  required_providers {
    hwaac = { source = "aiinfra/hwaac", version = "~> 0.1" }
  }
}

provider "hwaac" {}

resource "hwaac_fabric_plane" "plane" {
  count       = %d
  intent_file = "fabric.yml"
  plane       = count.index
}
"""


def say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def timed(folder: Path, env: dict[str, str], *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    t0 = time.perf_counter()
    r = subprocess.run(
        ["terraform", args[0], "-no-color", "-input=false", *args[1:]],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - t0, r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sus", type=int, help="grow the demo intent to this many SUs (the target scale: 16)")
    ap.add_argument("--repeat", type=int, default=3, help="no-op plans to time (default 3)")
    ap.add_argument(
        "--hold",
        action="store_true",
        help="afterwards keep NetBox and the Terraform folder until interrupted (for profiling); "
        "prints how to reach them",
    )
    args = ap.parse_args()
    tag = f"{args.sus}su" if args.sus else "demo"
    text = demo_intent_text(args.sus)
    plan = plan_from_text(text, "fabric.yml")
    print(
        f"fabric {plan.intent.fabric.name} ({tag}): {plan.design.planes} plane(s), {len(plan.switches)} switches, "
        f"{len(plan.nodes)} nodes, {len(plan.links)} links"
    )
    nb = LocalNetBox(log=say)
    nb.up()
    with tempfile.TemporaryDirectory(prefix="hwaac-tf-bench-") as tmp, nb.fresh(f"bench tf {tag}") as inst:
        folder = Path(tmp) / "stack"
        folder.mkdir()
        (folder / "fabric.yml").write_text(text)
        (folder / "main.tf").write_text(MAIN_TF % plan.design.planes)
        rc = build_mirror(Path(tmp) / "mirror")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TF_", "NETBOX_"))}
        env.update(
            TF_CLI_CONFIG_FILE=str(rc),
            CHECKPOINT_DISABLE="1",
            TF_IN_AUTOMATION="1",
            NETBOX_URL=inst.url,
            NETBOX_TOKEN=inst.token,
        )
        results: dict[str, float] = {}
        for name, cmd in (
            ("init", ("init",)),
            ("first plan", ("plan", "-out=tfplan")),
            ("first apply", ("apply", "tfplan")),
        ):
            say(f"terraform {' '.join(cmd)}")
            results[name], r = timed(folder, env, *cmd)
            if r.returncode != 0:
                print(f"terraform {' '.join(cmd)} failed:\n{r.stdout}\n{r.stderr}")
                return 1
        noops = []
        for i in range(args.repeat):
            say(f"no-op plan {i + 1}/{args.repeat}")
            dt, r = timed(folder, env, "plan", "-detailed-exitcode")
            if r.returncode != 0:
                print(f"the no-op plan was not empty (exit {r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr}")
                return 1
            noops.append(dt)
        for name, dt in results.items():
            print(f"terraform {name}: {dt:.1f} s")
        print(
            f"no-op plan (refresh reads NetBox back): best {min(noops):.1f} s, median "
            f"{statistics.median(noops):.1f} s over {len(noops)} runs" + (" (target <= 15 s)" if args.sus == 16 else "")
        )
        ok = args.sus != 16 or min(noops) <= 15
        print("targets met" if ok else "TARGETS MISSED")
        if args.hold:
            print(
                f"holding: cd {folder} && TF_CLI_CONFIG_FILE={rc} NETBOX_URL={inst.url} NETBOX_TOKEN=$(hwaac "
                "netbox token) terraform plan   (Ctrl-C ends)",
                flush=True,
            )
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                pass
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
