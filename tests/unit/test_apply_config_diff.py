"""hwaac.apply.config_diff: per-table summaries of a CONFIG_DB change, from two documents or an RFC 6902 patch,
checked against jsonpatch (the library GCU uses) on the demo leaf's rendered config_db."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonpatch
import pytest

from hwaac.apply.config_diff import summarize_config_diff, summarize_patch, summary_counts
from hwaac.apply.sonic_patch import config_patch, target_config
from hwaac.plan import build_plan
from hwaac.render.sonic import render_config_db
from hwaac.validate import load_intent

ROOT = Path(__file__).resolve().parents[2]
LEAF = "leaf-p0-su01-r0"

BASE: dict[str, Any] = {
    "PORT": {
        "Ethernet0": {"admin_status": "up", "mtu": "9100", "speed": "400000"},
        "Ethernet4": {"admin_status": "up", "mtu": "9100", "speed": "400000"},
        "Ethernet12": {"admin_status": "up", "mtu": "9100", "speed": "400000"},
    },
    "BGP_NEIGHBOR": {"default|10.0.0.1": {"asn": "65001", "name": "spine0"}},
    "INTERFACE": {"Ethernet0": {}, "Ethernet0|10.0.0.0/31": {}},
    "VLAN": {"Vlan10": {"vlanid": "10", "members": ["Ethernet4"]}},
}


def _edit(**tables: dict[str, Any]) -> dict[str, Any]:
    """BASE with tables replaced (a value None drops the table)."""
    doc = copy.deepcopy(BASE)
    for table, entries in tables.items():
        if entries is None:
            doc.pop(table, None)
        else:
            doc[table] = entries
    return doc


def _port(**changes: Any) -> dict[str, Any]:
    ports = copy.deepcopy(BASE["PORT"])
    for key, fields in changes.items():
        if fields is None:
            ports.pop(key)
        else:
            ports[key] = fields
    return ports


DIFF_CASES = [
    pytest.param(BASE, BASE, {}, id="identical"),
    pytest.param(
        BASE,
        _edit(PORT=_port(Ethernet0={"admin_status": "down", "mtu": "9100", "speed": "400000"})),
        {"PORT": {"added": [], "removed": [], "changed": {"Ethernet0": ["admin_status"]}}},
        id="field-value-changed",
    ),
    pytest.param(
        BASE,
        _edit(PORT=_port(Ethernet4={"admin_status": "up", "speed": "400000", "fec": "rs"})),
        {"PORT": {"added": [], "removed": [], "changed": {"Ethernet4": ["fec", "mtu"]}}},
        id="field-added-and-field-removed",
    ),
    pytest.param(
        BASE,
        _edit(PORT=_port(Ethernet12=None, Ethernet8={"mtu": "9100"}, Ethernet100={"mtu": "1500"})),
        {"PORT": {"added": ["Ethernet8", "Ethernet100"], "removed": ["Ethernet12"], "changed": {}}},
        id="keys-natural-order",
    ),
    pytest.param(
        BASE,
        _edit(BGP_NEIGHBOR=None, LOOPBACK_INTERFACE={"Loopback0|10.1.0.1/32": {}, "Loopback0": {}}),
        {
            "BGP_NEIGHBOR": {"added": [], "removed": ["default|10.0.0.1"], "changed": {}},
            "LOOPBACK_INTERFACE": {"added": ["Loopback0", "Loopback0|10.1.0.1/32"], "removed": [], "changed": {}},
        },
        id="table-only-one-side",
    ),
    pytest.param(
        BASE,
        _edit(VLAN={"Vlan10": {"vlanid": "10", "members": ["Ethernet4", "Ethernet12"]}}),
        {"VLAN": {"added": [], "removed": [], "changed": {"Vlan10": ["members"]}}},
        id="leaf-list-value",
    ),
    pytest.param(
        BASE,
        _edit(
            INTERFACE={"Ethernet0": {}, "Ethernet0|10.0.0.2/31": {}},
            BGP_NEIGHBOR={"default|10.0.0.3": {"asn": "65001", "name": "spine0"}},
        ),
        {
            "BGP_NEIGHBOR": {"added": ["default|10.0.0.3"], "removed": ["default|10.0.0.1"], "changed": {}},
            "INTERFACE": {"added": ["Ethernet0|10.0.0.2/31"], "removed": ["Ethernet0|10.0.0.0/31"], "changed": {}},
        },
        id="renumbered-tables-sorted",
    ),
]


@pytest.mark.parametrize(("before", "after", "expected"), DIFF_CASES)
def test_summarize_config_diff(before: dict[str, Any], after: dict[str, Any], expected: dict[str, Any]) -> None:
    got = summarize_config_diff(before, after)
    assert got == expected
    assert list(got) == sorted(got), "tables in sorted order"
    # the patch jsonpatch makes between the same documents reads the same, with or without 'before'
    patch = list(jsonpatch.make_patch(before, after))
    assert summarize_patch(patch, before=before) == expected
    if any(op["op"] == "remove" and op["path"].count("/") == 1 for op in patch):
        with pytest.raises(ValueError, match="remove of the whole table"):  # its keys are only in 'before'
            summarize_patch(patch)
    else:
        assert summarize_patch(patch) == expected


PATCH_CASES = [
    pytest.param([], {}, id="empty"),
    pytest.param(
        [
            {"op": "add", "path": "/PORT/Ethernet0/fec", "value": "rs"},
            {"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "4200"},
            {"op": "remove", "path": "/PORT/Ethernet4/admin_status"},
        ],
        {"PORT": {"added": [], "removed": [], "changed": {"Ethernet0": ["fec", "mtu"], "Ethernet4": ["admin_status"]}}},
        id="field-ops",
    ),
    pytest.param(
        [
            {"op": "add", "path": "/INTERFACE/Ethernet0|10.0.0.2~131", "value": {}},
            {"op": "remove", "path": "/INTERFACE/Ethernet0|10.0.0.0~131"},
        ],
        {"INTERFACE": {"added": ["Ethernet0|10.0.0.2/31"], "removed": ["Ethernet0|10.0.0.0/31"], "changed": {}}},
        id="rfc6901-escaped-keys",
    ),
    pytest.param(
        [
            {"op": "add", "path": "/VLAN/Vlan20", "value": {"vlanid": "20"}},
            {"op": "add", "path": "/VLAN/Vlan20/members", "value": ["Ethernet0"]},
            {"op": "remove", "path": "/VLAN/Vlan10"},
        ],
        {"VLAN": {"added": ["Vlan20"], "removed": ["Vlan10"], "changed": {}}},
        id="field-of-added-key-is-not-a-change",
    ),
    pytest.param(
        [{"op": "add", "path": "/VLAN/Vlan20", "value": {"vlanid": "20"}}, {"op": "remove", "path": "/VLAN/Vlan20"}],
        {},
        id="added-then-removed-nets-out",
    ),
    pytest.param(
        [
            {"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "4200"},
            {"op": "remove", "path": "/PORT/Ethernet0"},
        ],
        {"PORT": {"added": [], "removed": ["Ethernet0"], "changed": {}}},
        id="changed-then-removed-is-removed",
    ),
    pytest.param(
        [
            {"op": "remove", "path": "/PORT/Ethernet0"},
            {"op": "add", "path": "/PORT/Ethernet0", "value": {"mtu": "9100", "speed": "800000"}},
        ],
        {"PORT": {"added": [], "removed": [], "changed": {"Ethernet0": ["mtu", "speed"]}}},
        id="removed-then-added-is-changed",
    ),
    pytest.param(
        [{"op": "replace", "path": "/PORT/Ethernet4", "value": {"mtu": "9100", "speed": "400000"}}],
        {"PORT": {"added": [], "removed": [], "changed": {"Ethernet4": ["mtu", "speed"]}}},
        id="whole-entry-replace-without-before",
    ),
    pytest.param(
        [
            {
                "op": "add",
                "path": "/DEVICE_NEIGHBOR",
                "value": {"Ethernet8": {"name": "spine1"}, "Ethernet0": {"name": "spine0"}},
            }
        ],
        {"DEVICE_NEIGHBOR": {"added": ["Ethernet0", "Ethernet8"], "removed": [], "changed": {}}},
        id="whole-table-added",
    ),
    pytest.param(
        [
            {"op": "move", "from": "/BGP_NEIGHBOR/default|10.0.0.1", "path": "/BGP_NEIGHBOR/default|10.0.0.5"},
            {"op": "test", "path": "/PORT/Ethernet0/mtu", "value": "9100"},
        ],
        {"BGP_NEIGHBOR": {"added": ["default|10.0.0.5"], "removed": ["default|10.0.0.1"], "changed": {}}},
        id="move-and-test",
    ),
]


@pytest.mark.parametrize(("patch", "expected"), PATCH_CASES)
def test_summarize_patch(patch: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    assert summarize_patch(patch) == expected


@pytest.mark.parametrize(
    ("patch", "expected"),
    [c for c in PATCH_CASES if c.id not in ("removed-then-added-is-changed", "whole-entry-replace-without-before")],
)
def test_summarize_patch_with_before_agrees(patch: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    """Applied to BASE with jsonpatch, the patch reads the same as when read op by op."""
    assert summarize_patch(patch, before=BASE) == expected


def test_whole_entry_replace_is_exact_with_before() -> None:
    """Without 'before' a whole-entry replace lists the new value's fields; with it, only those that differ
    (admin_status dropped)."""
    patch = [{"op": "replace", "path": "/PORT/Ethernet4", "value": {"mtu": "9100", "speed": "400000"}}]
    assert summarize_patch(patch, before=BASE) == {
        "PORT": {"added": [], "removed": [], "changed": {"Ethernet4": ["admin_status"]}}
    }


@cache
def _rendered() -> str:
    plan = build_plan(load_intent(ROOT / "inventory" / "demo"))
    switch = next(s for s in plan.switches if s.name == LEAF)
    return json.dumps(render_config_db(plan, switch))


def test_demo_leaf_push_patch_summary_matches_documents() -> None:
    """The patch hwaac pushes to a leaf that runs an older plan (one neighbour renumbered, one port's MTU off, a
    factory FEATURE table) summarizes the same read op by op, applied to the running config, and as the diff of
    running vs target_config."""
    desired = json.loads(_rendered())
    running = copy.deepcopy(desired)
    neighbor = sorted(running["BGP_NEIGHBOR"])[0]
    running["BGP_NEIGHBOR"]["default|192.0.2.99"] = running["BGP_NEIGHBOR"].pop(neighbor)
    port = sorted(running["PORT"])[0]
    running["PORT"][port]["mtu"] = "1500"
    running["FEATURE"] = {"lldp": {"state": "enabled"}}
    patch = config_patch(running, desired)
    expected = summarize_config_diff(running, target_config(running, desired))
    assert expected["BGP_NEIGHBOR"] == {"added": [neighbor], "removed": ["default|192.0.2.99"], "changed": {}}
    assert expected["PORT"]["changed"] == {port: ["mtu"]}
    assert "FEATURE" not in expected
    assert summarize_patch(patch) == expected
    assert summarize_patch(patch, before=running) == expected


def test_summary_counts() -> None:
    summary = summarize_config_diff(
        BASE, _edit(PORT=_port(Ethernet12=None, Ethernet8={"mtu": "1"}), VLAN={"Vlan10": {"vlanid": "11"}})
    )
    assert summary_counts(summary) == {
        "PORT": {"added": 1, "removed": 1, "changed": 0},
        "VLAN": {"added": 0, "removed": 0, "changed": 1},
    }


BAD_DIFF = [
    pytest.param([], BASE, "before: expected a config_db object", id="before-not-object"),
    pytest.param(BASE, {"PORT": ["Ethernet0"]}, "after: table 'PORT' must be an object", id="table-not-object"),
    pytest.param(
        BASE,
        {"PORT": {"Ethernet0": "up"}},
        "after: PORT['Ethernet0'] must be an object of fields",
        id="entry-not-object",
    ),
]


@pytest.mark.parametrize(("before", "after", "message"), BAD_DIFF)
def test_summarize_config_diff_bad_input(before: Any, after: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        summarize_config_diff(before, after)


BAD_PATCH = [
    pytest.param({"op": "add"}, None, r"patch: expected a list of RFC 6902 operations, got dict", id="not-list"),
    pytest.param(["add"], None, r"patch\[0\]: expected an operation object", id="op-not-object"),
    pytest.param(
        [{"op": "merge", "path": "/PORT"}],
        None,
        r"patch\[0\]\.op: 'merge' is not an RFC 6902 operation \(valid: add, remove, replace, move, copy, "
        r"test\)",
        id="unknown-op",
    ),
    pytest.param([{"op": "remove"}], None, r"patch\[0\]\.path: missing", id="no-path"),
    pytest.param(
        [{"op": "remove", "path": "PORT/Ethernet0"}],
        None,
        r"patch\[0\]\.path: 'PORT/Ethernet0' is not an RFC 6901 JSON pointer",
        id="pointer-no-slash",
    ),
    pytest.param([{"op": "move", "path": "/PORT/Ethernet1"}], None, r"patch\[0\]\.from: missing", id="move-no-from"),
    pytest.param(
        [{"op": "replace", "path": "/PORT/Ethernet0/mtu"}],
        None,
        r"patch\[0\]: a 'replace' operation needs a 'value'",
        id="no-value",
    ),
    pytest.param(
        [{"op": "remove", "path": "/PORT"}],
        None,
        r"patch\[0\]: remove of the whole table /PORT cannot be summarized without the config",
        id="whole-table-remove-needs-before",
    ),
    pytest.param(
        [{"op": "replace", "path": "", "value": {}}],
        None,
        r"patch\[0\]: replace of the whole document cannot be summarized",
        id="whole-doc-needs-before",
    ),
    pytest.param(
        [{"op": "remove", "path": "/PORT/Ethernet99"}], BASE, r"patch: does not apply to 'before'", id="does-not-apply"
    ),
]


@pytest.mark.parametrize(("patch", "before", "message"), BAD_PATCH)
def test_summarize_patch_bad_input(patch: Any, before: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        summarize_patch(patch, before=before)


def test_whole_table_remove_with_before() -> None:
    assert summarize_patch([{"op": "remove", "path": "/VLAN"}], before=BASE) == {
        "VLAN": {"added": [], "removed": ["Vlan10"], "changed": {}}
    }
