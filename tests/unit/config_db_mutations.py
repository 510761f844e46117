"""The demo leaf's rendered config_db and mutations of it, shared by the config_db validator's tests
(test_sonic_validate.py, test_sonic_validate_own_checks.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

from hwaac.render.sonic import render_config_db
from tests.unit.sonic_plans import LEAF, demo_plan

NBR = "default|10.1.0.0"  # the leaf's neighbour spine-p0-01
AF = f"{NBR}|ipv4_unicast"


@cache
def _leaf_text() -> str:
    plan = demo_plan()
    return json.dumps(render_config_db(plan, plan.switch_by_name[LEAF]))


def leaf() -> dict:
    return json.loads(_leaf_text())


Mutation = Callable[[dict], None]


def put(*path_and_value: Any) -> Mutation:
    """Set the field at the path to the value; a value of None deletes it."""
    *keys, last, value = path_and_value

    def mutate(cfg: dict) -> None:
        node = cfg
        for k in keys:
            node = node.setdefault(k, {})
        if value is None:
            del node[last]
        else:
            node[last] = value

    return mutate


def rename(table: str, old: str, new: str) -> Mutation:
    def mutate(cfg: dict) -> None:
        cfg[table][new] = cfg[table].pop(old)

    return mutate


def both(*mutations: Mutation) -> Mutation:
    def mutate(cfg: dict) -> None:
        for m in mutations:
            m(cfg)

    return mutate


def mutated(mutate: Mutation) -> dict:
    cfg = leaf()
    mutate(cfg)
    return cfg
