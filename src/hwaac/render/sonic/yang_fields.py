"""The field names SONiC's YANG models define per config_db table (``yang_fields.json``), and how to regenerate it.

:mod:`hwaac.render.sonic.validate` accepts a field of a table it models exactly when YANG defines it. Regenerate
after the toolkit's models change, with the toolkit's Python (it has libyang)::

    . "$CACHE/env.sh" && "$SONIC_KIT_PYTHON" src/hwaac/render/sonic/yang_fields.py > \\
        src/hwaac/render/sonic/yang_fields.json

It runs there with the standard library and libyang only; the unit tests compare its output with the committed
file when the toolkit is set up.
"""

from __future__ import annotations

import glob
import json
import os
import sys
from importlib import resources
from typing import Any

FILE = "yang_fields.json"


def load() -> dict[str, list[str]]:
    """``{TABLE: [field, ...]}`` for every table whose entries are field sets (map tables such as DSCP_TO_TC_MAP,
    whose entries are inner key -> value lists, are left out)."""
    text = resources.files(__package__).joinpath(FILE).read_text(encoding="utf-8")
    return json.loads(text)["tables"]


def generate(yang_dir: str) -> dict[str, Any]:  # pragma: no cover - runs in the toolkit's Python
    """The document of ``yang_fields.json`` from the models in ``yang_dir`` (libyang's compiled schema)."""
    import libyang  # type: ignore[import-not-found]

    ctx = libyang.Context(yang_dir)
    for path in sorted(glob.glob(os.path.join(yang_dir, "*.yang"))):
        name = os.path.basename(path)[: -len(".yang")].split("@")[0]
        try:
            ctx.load_module(name)
        except libyang.LibyangError:
            continue
    tables: dict[str, set[str]] = {}
    for module in ctx:
        if not module.name().startswith("sonic-"):
            continue
        for top in module.children():
            for table in top.children():
                if table.keyword() != "container":
                    continue
                for lst in table.children():
                    if lst.keyword() not in ("list", "container"):
                        continue
                    keys = {k.name() for k in lst.keys()} if lst.keyword() == "list" else set()  # noqa: SIM118
                    leaves = [c for c in lst.children() if c.keyword() in ("leaf", "leaf-list")]
                    if any(c.keyword() == "list" for c in lst.children()):
                        continue  # a map table: its entries are an inner list
                    tables.setdefault(table.name(), set()).update(c.name() for c in leaves if c.name() not in keys)
    return {
        "source": f"SONiC YANG models in {os.path.basename(os.path.normpath(yang_dir))} (libyang "
        f"{getattr(libyang, '__version__', '?')}); see hwaac.render.sonic.yang_fields",
        "tables": {t: sorted(f) for t, f in sorted(tables.items())},
    }


if __name__ == "__main__":  # pragma: no cover
    doc = generate(os.environ["SONIC_YANG_DIR"])
    doc["source"] = f"SONiC toolkit {os.environ.get('SONIC_KIT_VERSION', '?')}: YANG models (sonic-yang-models)"
    lines = [f"  {json.dumps(t)}: {json.dumps(f)}" for t, f in doc["tables"].items()]
    sys.stdout.write('{"source": ' + json.dumps(doc["source"]) + ',\n "tables": {\n' + ",\n".join(lines) + "\n}}\n")
