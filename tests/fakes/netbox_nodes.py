"""Prepare NetBox for the burn-in scenarios: sync a fixture fabric and put named nodes back to ``planned``.

    python -m tests.fakes.netbox_nodes [--sync] INTENT NODE [NODE ...]

Uses ``NETBOX_URL``/``NETBOX_TOKEN`` when set (the tests give a fresh database), else the local NetBox. The reset
(status planned, custom field hwaac_lifecycle cleared, hwaac's journal entries of those nodes deleted) exists for
tests only: hwaac itself never moves a node outside the lifecycle's transitions. The sync runs only when one of the
nodes is not in NetBox yet: the scenarios share a database (one per test worker) and sync the same fixture, whose
second sync would change nothing but costs a read of the whole fabric. ``--sync`` syncs anyway.
"""

from __future__ import annotations

import sys

from hwaac.netbox.connection import netbox_target
from hwaac.netbox.lifecycle import LIFECYCLE_FIELD
from hwaac.netbox.sync import sync_plan
from hwaac.netbox.sync.client import Client
from hwaac.netbox.sync.desired import fabric_tag
from hwaac.plan import build_plan
from hwaac.validate import load_intent


def main(argv: list[str]) -> int:
    force = "--sync" in argv
    intent, *nodes = [a for a in argv if a != "--sync"]
    target = netbox_target()
    client = Client(target.url, target.token)
    plan = build_plan(load_intent(intent))
    tag = fabric_tag(plan)  # the nodes of this fabric, not devices of another that share their names
    known = bool(client.read("tags", "id", slug=tag))  # NetBox refuses a filter by a tag it does not have
    recs = client.read("devices", "id,name,custom_fields", name=nodes, tag=tag) if known else []
    if force or {r["name"] for r in recs} != set(nodes):
        sync_plan(plan, target.url, target.token)
        recs = client.read("devices", "id,name,custom_fields", name=nodes, tag=tag)
    missing = sorted(set(nodes) - {r["name"] for r in recs})
    if missing:
        print(f"no such device(s) in the fabric: {', '.join(missing)}", file=sys.stderr)
        return 1
    ids = [r["id"] for r in recs]
    has_field = bool(client.read("custom-fields", "id", name=LIFECYCLE_FIELD))
    field = {"custom_fields": {LIFECYCLE_FIELD: None}} if has_field else {}
    client.endpoint("devices").update([{"id": i, "status": "planned", **field} for i in ids])
    entries = client.read("journal-entries", "id", assigned_object_type="dcim.device", assigned_object_id=ids)
    if entries:
        client.endpoint("journal-entries").delete([e["id"] for e in entries])
    print(f"{len(ids)} node(s) planned, their journal cleared, at {target.url}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
