"""One table of LNet's global settings: the lnet host module (plugins/module_utils/lnet_plan.py) and the intent
model (hwaac.model.storage through the symlink hwaac/model/lnet_globals.py) read the very same file, so the names
and the order that ``lnetctl global show`` prints cannot diverge."""

from __future__ import annotations

from pathlib import Path

import hwaac.model.lnet_globals as controller
from ansible_collections.aiinfra.hwaac.plugins.module_utils import lnet_globals as host
from ansible_collections.aiinfra.hwaac.plugins.module_utils import lnet_plan
from hwaac.model import storage


def test_both_sides_load_the_same_file() -> None:
    """hwaac imports it outside the collection (so it imports nothing of either side), through a symlink."""
    assert Path(controller.__file__).is_symlink()
    assert Path(controller.__file__).resolve() == Path(host.__file__).resolve()


def test_the_module_and_the_model_use_the_table() -> None:
    assert lnet_plan.GLOBALS is host.GLOBALS
    assert storage.GLOBALS is controller.GLOBALS
    # every global setting of the intent is one lnetctl knows, in lnetctl's order
    fields = [k for k in storage.LnetSection.model_fields if k != "networks"]
    assert sorted(fields) == sorted(storage.LNET_GLOBALS)
    assert list(storage.LNET_GLOBALS) == [k for k in host.GLOBALS if k in fields]
