"""What a sync writes on an object a person made (:mod:`hwaac.netbox.sync.ownership`): the plan's value only where
the person's is empty, the person's kept in the fields they own, any other difference a conflict."""

from __future__ import annotations

from typing import Any

import pytest

from hwaac.netbox.sync.desired import ADOPTED_TAG, Ref, Want
from hwaac.netbox.sync.ownership import adopted_diff, journal, protected, released_tags
from hwaac.netbox.sync.records import show

SPINE = Ref("device-roles", "spine")
SITE = Ref("sites", "lab")


# kind, the plan's fields, NetBox's (normalised) fields, fields written, conflict naming this text (or None)
CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any], str | None]] = [
    (
        "devices",
        {"role": SPINE, "custom_fields.hwaac_asn": 65100},
        {"role": Ref("device-roles", "core-switch"), "custom_fields.hwaac_asn": None},
        {"custom_fields.hwaac_asn": 65100},
        None,
    ),  # the person's role kept, the empty ASN filled in
    (
        "devices",
        {"role": SPINE, "custom_fields.hwaac_asn": 65100},
        {"role": SPINE, "custom_fields.hwaac_asn": 64999},
        {},
        "custom_fields.hwaac_asn 64999, the plan needs 65100",
    ),
    ("devices", {"role": SPINE}, {"role": None}, {"role": SPINE}, None),
    (
        "prefixes",
        {"status": "container", "scope": SITE},
        {"status": "active", "scope": None},
        {"scope": SITE},
        None,
    ),  # status kept, the missing scope filled in
    (
        "prefixes",
        {"status": "container", "scope": SITE},
        {"status": "reserved", "scope": Ref("sites", "dc2")},
        {},
        None,
    ),  # both the person's
    ("cables", {"label": "C0001"}, {"label": "patch 14/3"}, {}, None),
    ("cables", {"label": "C0001"}, {"label": ""}, {"label": "C0001"}, None),
    ("ip-addresses", {"address": "10.0.0.1/31"}, {"address": "10.0.0.1/24"}, {}, "address 10.0.0.1/24"),
    ("asn-ranges", {"start": 65100, "end": 65199}, {"start": 65100, "end": 65150}, {}, "end 65150"),
    (
        "asns",
        {"description": "leaf-1", "sites": (SITE,)},
        {"description": "Ann's", "sites": ()},
        {"sites": (SITE,)},
        None,
    ),
]


@pytest.mark.parametrize(("kind", "plan", "netbox", "written", "conflict"), CASES)
def test_adopted_object_keeps_what_the_person_entered(
    kind: str, plan: dict[str, Any], netbox: dict[str, Any], written: dict[str, Any], conflict: str | None
) -> None:
    diff, conflicts = adopted_diff(kind, Want("k", plan), netbox, f"{kind} k", 7, show)
    assert {f: new for f, (_old, new) in diff.items()} == written
    assert all(netbox[f] == old for f, (old, _new) in diff.items())
    if conflict is None:
        assert conflicts == []
    else:
        assert len(conflicts) == 1 and conflict in conflicts[0] and "id 7" in conflicts[0], conflicts


def test_release_keeps_the_persons_tags_and_says_why() -> None:
    ours = {"hwaac", "hwaac-fabric-f", "hwaac-plane-f-0"}
    old, new = released_tags(
        {"hwaac", "hwaac-fabric-f", "hwaac-plane-f-0", ADOPTED_TAG, "do-not-reboot"}, lambda t: t in ours
    )
    assert new == ("do-not-reboot",) and set(old) == ours | {ADOPTED_TAG, "do-not-reboot"}
    entry = journal("devices", 12, "f", "no longer in the plan")
    assert (entry["assigned_object_type"], entry["assigned_object_id"]) == ("dcim.device", 12)
    assert "no longer in the plan" in entry["comments"] and "nothing of it was deleted" in entry["comments"]


@pytest.mark.parametrize(
    ("status", "kept"),
    [
        ({"value": "active", "label": "Active"}, "active"),
        ({"value": "failed"}, "failed"),
        ("staged", "staged"),
        ({"value": "planned"}, None),
        ({"value": "decommissioning"}, None),
        (None, None),
    ],
)
def test_devices_in_service_are_protected(status: Any, kept: str | None) -> None:
    assert protected({"status": status}) == kept
