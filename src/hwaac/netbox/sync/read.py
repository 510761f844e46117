"""The sync's reads: what NetBox holds of the fabric, several object types side by side.

Reads use large pages (limit=1000) and ``fields=`` so NetBox serialises only what the diff needs: catalogue
objects by natural key, owned objects by the fabric's tag (with the plane tags that claim them), and the objects
the plan would adopt; cable ends and address assignments are filled in from one read of the site's cabled
interfaces instead of NetBox's nested serialisation. :class:`hwaac.netbox.sync.engine.Sync` reads with it.
"""

from __future__ import annotations

from collections.abc import Hashable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hwaac.netbox.sync.client import Client
from hwaac.netbox.sync.desired import ADOPTED_TAG, Desired
from hwaac.netbox.sync.records import CATALOGUE, ID_CHUNK, KEY, OWNED, by_length, chunks, tags_of

READ_THREADS = 3  # object types read side by side (NetBox serialises while the client parses)


class SyncReads:
    """The reading half of a sync: fills ``existing``, ``ids``, ``dupes``, ``elsewhere`` and ``adopted_anywhere``."""

    c: Client
    d: Desired
    site: str
    pools: list[str]
    fields: dict[str, str]
    ftag: str
    ids: dict[str, dict[Hashable, int]]
    existing: dict[str, dict[Hashable, dict]]
    dupes: dict[str, list[dict]]
    elsewhere: list[dict]
    adopted_anywhere: bool

    def site_slugs(self) -> dict[int, str]:
        """The slug of each site read, by its NetBox id (``ids["sites"]`` is keyed by slug)."""
        return {i: k for k, i in self.ids.get("sites", {}).items() if isinstance(k, str)}

    def _read_all(self) -> None:
        w = self.d.kinds
        c = self.c
        for kind in CATALOGUE:
            keys = list(w.get(kind, {}))
            if kind == "interface-templates":
                type_ids = list(self.ids.get("device-types", {}).values())
                recs = (
                    [r for ch in chunks(type_ids, 100) for r in c.read(kind, self.fields[kind], devicetype_id=ch)]
                    if type_ids
                    else []
                )
            elif kind == "custom-fields":
                recs = c.read(kind, self.fields[kind], name=keys)
            elif kind == "tags":  # also the plane tags of planes not in this sync (their claims are read below)
                recs = c.read(kind, self.fields[kind], slug=keys) + c.read(
                    kind, self.fields[kind], slug__isw=self.d.plane_tag_prefix
                )
            elif keys:
                recs = c.read(kind, self.fields[kind], slug=keys)
            else:
                recs = []
            self._index(kind, recs)
            if kind == "tags":
                self.adopted_anywhere = any(r["slug"] == ADOPTED_TAG and r.get("tagged_items") for r in recs)
        site_id = self.ids.get("sites", {}).get(self.site)
        # a fabric tag that does not exist yet means nothing is owned yet (and NetBox refuses the filter)
        tagged = self.ftag in self.ids["tags"]
        plane_tags = sorted(t for t in self.ids["tags"] if isinstance(t, str) and self.d.is_plane_tag(t))

        def owned(kind: str) -> list[dict]:
            return c.read(kind, self.fields[kind], tag=self.ftag) if tagged else []

        def claims(kind: str, t: str) -> tuple[bool, set[int]]:
            """(True, ids of the owned objects plane tag ``t`` claims) or, when the plan says most of them are
            claimed (a one-plane fabric: all), (False, ids of the owned objects it does not claim): whichever read
            is expected to be smaller. Plane tags are the fabric's own, so one tag filter finds their objects."""
            wants = w.get(kind, {}).values()
            expect = sum(1 for want in wants if p_of[t] in want.planes)
            if 2 * expect > len(wants):
                return False, {r["id"] for r in c.read(kind, "id", tag=self.ftag, tag__n=t)}
            return True, {r["id"] for r in c.read(kind, "id", tag=t)}

        def adopted(kind: str) -> set[int]:
            """The fabric's owned objects a person made (NetBox ANDs repeated tag filters)."""
            return {r["id"] for r in c.read(kind, "id", tag=[self.ftag, ADOPTED_TAG])}

        def elsewhere() -> list[dict]:
            """Devices of another site named as planned devices (NetBox names are unique per site only)."""
            names = sorted(k for k in w.get("devices", {}) if isinstance(k, str))
            other: dict[str, Any] = {"site_id__n": site_id} if site_id is not None else {}
            return [r for ch in by_length(names) for r in c.read("devices", "id,name,site", name=ch, **other)]

        def unowned(kind: str) -> list[dict]:
            others = self.fields[kind] + ",tags"
            nt: dict[str, Any] = {"tag__n": self.ftag} if tagged else {}
            recs: list[dict] = []
            if kind == "asn-ranges":
                recs += c.read(kind, others, name=list(w.get(kind, {})), **nt)
            elif kind == "asns":
                for ch in chunks(sorted(w.get(kind, {})), 200):
                    recs += c.read(kind, others, asn=ch, **nt)
            elif kind in ("devices", "cables") and site_id is not None:
                recs += c.read(kind, others, site_id=site_id, **nt)
            elif kind == "prefixes":
                for pool in self.pools:
                    recs += c.read(kind, others, within_include=pool, **nt)
            elif kind == "ip-addresses" and self.pools:
                recs += c.read(kind, others, parent=self.pools, **nt)
            return recs

        p_of = {t: int(t[len(self.d.plane_tag_prefix) :]) for t in plane_tags}
        # every read is its own task, the largest first: NetBox serialises one page while this process parses
        # another, and no type waits behind another's pages
        with ThreadPoolExecutor(max_workers=READ_THREADS) as pool:
            cabled = pool.submit(self._cabled, site_id)
            big_first = sorted(OWNED, key=lambda k: -len(w.get(k, {})))
            own = {kind: pool.submit(owned, kind) for kind in big_first}
            claim = (
                {(kind, t): pool.submit(claims, kind, t) for kind in big_first for t in plane_tags} if tagged else {}
            )
            other = {kind: pool.submit(unowned, kind) for kind in big_first}
            mine = {kind: pool.submit(adopted, kind) for kind in big_first} if tagged and self.adopted_anywhere else {}
            named = pool.submit(elsewhere)
            raw: dict[str, list[dict]] = {}
            for kind in OWNED:
                recs = own[kind].result()
                if recs:  # which planes claim them (tags are costly to serialise: only the ones that matter here)
                    got = {t: claim[kind, t].result() for t in plane_tags}
                    made = mine[kind].result() if mine else set()
                    # a write of tags first reads the object's full list (_full_tags)
                    recs = [
                        {
                            **r,
                            "_partial_tags": True,
                            "tags": [{"slug": self.ftag}]
                            + [{"slug": t} for t, (positive, ids) in got.items() if (r["id"] in ids) == positive]
                            + ([{"slug": ADOPTED_TAG}] if r["id"] in made else []),
                        }
                        for r in recs
                    ]
                recs += other[kind].result()
                if kind in ("prefixes", "ip-addresses"):  # the global VRF only
                    recs = [r for r in recs if not r.get("vrf") or self.ftag in tags_of(r)]
                raw[kind] = recs
            names, terms = cabled.result()
            self.elsewhere = named.result()
        self._ends(raw["cables"], raw["ip-addresses"], names, terms)
        for kind in OWNED:
            self._index(kind, raw[kind])

    def _cabled(self, site_id: int | None) -> tuple[dict[int, dict], dict[int, list[dict]]]:
        """The site's cabled interfaces (id -> record with name, device, cable, cable_end) and, per cable id, its
        interface terminations: one read, instead of NetBox's nested serialisation of cable ends (~3 ms a cable)."""
        names: dict[int, dict] = {}
        terms: dict[int, list[dict]] = {}
        if site_id is None:
            return names, terms
        for r in self.c.read("interfaces", "id,name,device,cable,cable_end", site_id=site_id, cabled=True):
            names[r["id"]] = r
            if isinstance(r.get("cable"), dict):
                terms.setdefault(r["cable"]["id"], []).append(
                    {"cable_end": r.get("cable_end"), "termination_type": "dcim.interface", "termination_id": r["id"]}
                )
        return names, terms

    def _ends(self, cables: list[dict], ips: list[dict], names: dict[int, dict], terms: dict[int, list[dict]]) -> None:
        """Fill in each cable's ``a_/b_terminations`` and each address's ``assigned_object`` (interface name and
        device name), as NetBox's nested serialisation would, from the site's cabled interfaces (``_cabled``);
        cable-terminations only for cables with no interface at the site, and interfaces by id for addresses on
        uncabled ones (loopbacks)."""
        c = self.c
        for ch in chunks(sorted({r["id"] for r in cables} - set(terms)), ID_CHUNK):
            for t in c.read("cable-terminations", "cable,cable_end,termination_type,termination_id", cable_id=ch):
                terms.setdefault(t["cable"], []).append(t)
        need = {t["termination_id"] for ts in terms.values() for t in ts if t["termination_type"] == "dcim.interface"}
        need |= {
            r["assigned_object_id"]
            for r in ips
            if r.get("assigned_object_type") == "dcim.interface" and r.get("assigned_object_id") is not None
        }
        for ch in chunks(sorted(need - set(names)), ID_CHUNK):
            for r in c.read("interfaces", "id,name,device", id=ch):
                names[r["id"]] = r
        for r in cables:
            for end in ("A", "B"):
                r[f"{end.lower()}_terminations"] = [
                    {
                        "object_type": t["termination_type"],
                        "object_id": t["termination_id"],
                        "object": names.get(t["termination_id"]) if t["termination_type"] == "dcim.interface" else None,
                    }
                    for t in sorted(terms.get(r["id"], []), key=lambda t: t["termination_id"])
                    if t["cable_end"] == end
                ]
        for r in ips:
            r["assigned_object"] = (
                names.get(r["assigned_object_id"]) if r.get("assigned_object_type") == "dcim.interface" else None
            )

    def _index(self, kind: str, recs: list[dict]) -> None:
        by_key: dict[Hashable, dict] = {}
        dupes: list[dict] = []
        seen: set[int] = set()
        for r in recs:
            if r["id"] in seen:
                continue
            seen.add(r["id"])
            k = KEY[kind](r)
            if k in by_key:  # keep the owned one; extra owned duplicates are deleted
                keep, other = (
                    (r, by_key[k])
                    if self.ftag in tags_of(r) and self.ftag not in tags_of(by_key[k])
                    else (by_key[k], r)
                )
                by_key[k] = keep
                dupes.append(other)
            else:
                by_key[k] = r
        self.existing[kind] = by_key
        self.dupes[kind] = [r for r in dupes if self.ftag in tags_of(r)]
        self.ids[kind] = {k: r["id"] for k, r in by_key.items()}
