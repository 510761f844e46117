"""The hwaac cdktn app: one stack per fabric folder under ``inventory/`` (a folder holding ``fabric.yml``).

Run from this folder: ``../.venv/bin/python main.py`` (or ``cdktn synth``, which runs the same command from
``cdktf.json``). Each stack lands in ``<outdir>/stacks/<fabric name>/cdk.tf.json``; see README.md.

Environment:
    HWAAC_FABRICS       comma list of fabric folder names to include (``demo,b300-twin-plane``); default: all.
    HWAAC_CDKTF_OUTDIR  output folder; default: ``$CDKTF_OUTDIR`` (set by the cdktn CLI), else ``cdktf.out``
                        next to this file. Relative values are relative to the current directory.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
INVENTORY = REPO / "inventory"

# jsii's node child process is started by the first `import cdktn` and keeps the environment it started with, so
# these must be set before hwaac.cdk is imported. setdefault: whatever the caller set wins.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")  # node 20 works; jsii only warns
os.environ.setdefault("JSII_RUNTIME_PACKAGE_CACHE_ROOT", str(REPO / "build" / "jsii-cache"))  # not ~/.cache
os.environ.setdefault("CHECKPOINT_DISABLE", "1")

if importlib.util.find_spec("hwaac") is None:  # run with a Python that does not have hwaac installed
    sys.path.insert(0, str(REPO / "src"))

import cdktn  # noqa: E402  (after the environment above)

from hwaac.cdk import FabricStack, read_fabric_header  # noqa: E402
from hwaac.errors import IntentError  # noqa: E402


def fabric_folders(inventory: Path = INVENTORY) -> list[Path]:
    """Every folder under ``inventory`` that holds a ``fabric.yml``, sorted by path."""
    return sorted(p.parent for p in inventory.rglob("fabric.yml") if not any(s.startswith(".") for s in p.parts))


def select(folders: list[Path], wanted: str | None) -> list[Path]:
    """``folders`` whose name is in the comma list ``wanted`` (all when it is empty or ``None``).

    Raises:
        SystemExit: a wanted name matches no folder (the message lists the valid names).
    """
    names = [w.strip() for w in (wanted or "").split(",") if w.strip()]
    if not names:
        return folders
    by_name = {f.name: f for f in folders}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise SystemExit(
            f"HWAAC_FABRICS: no fabric folder named {', '.join(unknown)}; valid: {', '.join(sorted(by_name))}"
        )
    return [by_name[n] for n in dict.fromkeys(names)]


def output_dir() -> Path:
    """The output folder, absolute (see the module docstring for the order of precedence)."""
    raw = os.environ.get("HWAAC_CDKTF_OUTDIR") or os.environ.get("CDKTF_OUTDIR")
    return Path(raw).resolve() if raw else HERE / "cdktf.out"


def main() -> int:
    """Synthesize the selected fabrics; 0 on success, 1 when an intent cannot be read."""
    folders = select(fabric_folders(), os.environ.get("HWAAC_FABRICS"))
    outdir = output_dir()
    outdir.mkdir(parents=True, exist_ok=True)  # cdktn's App creates only the last level
    app = cdktn.App(outdir=str(outdir))
    seen: dict[str, Path] = {}
    try:
        for folder in folders:
            name = read_fabric_header(folder).name
            if name in seen:  # the stack id is the fabric name; two folders must not share a stack folder
                print(f"fabric name {name!r} is used by both {seen[name]} and {folder}", file=sys.stderr)
                return 1
            seen[name] = folder
            FabricStack(app, name, intent_file=folder)
    except (IntentError, FileNotFoundError) as exc:
        print(exc, file=sys.stderr)
        return 1
    app.synth()
    for name in seen:
        print(f"{name}: {outdir / 'stacks' / name / 'cdk.tf.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
