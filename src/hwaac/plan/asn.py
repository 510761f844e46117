"""ASN allocation (RFC 7938 section 5.2.1): unique per leaf, shared per spine layer and plane, one for super-spines.

2 tiers: spine ASN = ``asn.spine.first + plane``. 3 tiers: spines of a pod share an ASN per plane,
``asn.spine.first + pod * planes + plane`` (each pod is its own tier-2 cluster). Leaf ASN =
``asn.leaf.first + leaf ordinal`` (SU-major, growth-stable). Defaults lie in the 4-byte private range of
RFC 6996 (4200000000-4294967294).
"""

from __future__ import annotations

from hwaac.errors import IntentIssue
from hwaac.model.intent import Intent
from hwaac.plan.design import Design


def leaf_asn(intent: Intent, leaf_ordinal: int) -> int:
    return intent.asn.leaf.first + leaf_ordinal


def spine_asn(intent: Intent, design: Design, plane: int, pod: int = 0) -> int:
    return intent.asn.spine.first + pod * design.planes + plane


def check_asns(intent: Intent, design: Design) -> list[IntentIssue]:
    """Ranges that are reversed, overlap, or are too small for ``su_capacity`` (exhausted)."""
    a, d = intent.asn, design
    issues: list[IntentIssue] = []
    leaves = d.su_capacity * d.rails * d.planes
    spine_sets = d.planes * (d.pod_capacity if d.tiers == 3 else 1)
    for name, rng, need in (("leaf", a.leaf, leaves), ("spine", a.spine, spine_sets)):
        size = rng.last - rng.first + 1
        if size < 1:
            issues.append(
                IntentIssue(
                    f"asn.{name}.last",
                    "range ends before it starts",
                    rng.last,
                    f">= asn.{name}.first ({rng.first})",
                    rule="asn-range-reversed",
                )
            )
        elif need > size:
            issues.append(
                IntentIssue(
                    f"asn.{name}",
                    f"ASN range exhausted: {need} ASNs needed for {d.su_capacity} SU(s), the range holds {size}",
                    f"{rng.first}-{rng.last}",
                    f"last >= {rng.first + need - 1}",
                    rule="asn-exhausted",
                )
            )
    if not (a.leaf.last < a.spine.first or a.spine.last < a.leaf.first):
        issues.append(
            IntentIssue(
                "asn.leaf",
                "overlaps asn.spine",
                f"{a.leaf.first}-{a.leaf.last}",
                "disjoint leaf and spine ranges",
                rule="asn-overlap",
            )
        )
    if d.tiers == 3:
        for name, rng in (("leaf", a.leaf), ("spine", a.spine)):
            if rng.first <= a.super_spine <= rng.last:
                issues.append(
                    IntentIssue(
                        "asn.super_spine",
                        f"lies inside asn.{name}",
                        a.super_spine,
                        f"an ASN outside {rng.first}-{rng.last}",
                        rule="super-spine-asn-in-range",
                    )
                )
    return issues
