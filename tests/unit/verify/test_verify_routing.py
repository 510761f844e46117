"""The converged-fabric model: AS-path loop check, shortest paths, multipath over parallel sessions, counts."""

from __future__ import annotations

from hwaac.verify.routing import Edge, Routing, explain

# two leaves (own ASNs), two spines; leaf a has two parallel sessions to s1
EDGES = (
    Edge("a1", "a", "s1"),
    Edge("a1b", "a", "s1"),
    Edge("a2", "a", "s2"),
    Edge("b1", "b", "s1"),
    Edge("b2", "b", "s2"),
)
ORIGINS = {"a": ("A/32", "A1/31", "A2/31"), "b": ("B/32",), "s1": ("S1/32",), "s2": ("S2/32",)}


def model(asn_s2: int = 100, edges: tuple[Edge, ...] = EDGES, max_paths: dict[str, int] | None = None) -> Routing:
    return Routing({"a": 1, "b": 2, "s1": 100, "s2": asn_s2}, edges, ORIGINS, max_paths or {})


def test_multipath_counts_parallel_sessions() -> None:
    r = model()
    assert r.nexthops("a", "b") == {"a1", "a1b", "a2"} and r.width("a", "b") == 3
    assert r.nexthops("b", "a") == {"b1", "b2"}


def test_maximum_paths_caps_the_width() -> None:
    assert model(max_paths={"a": 2}).width("a", "b") == 2


def test_shared_spine_asn_blocks_spine_to_spine() -> None:
    assert not model().reaches("s1", "s2")
    assert model(asn_s2=200).reaches("s1", "s2")  # distinct ASNs: s1 -> a -> s2


def test_received_counts_after_the_loop_check() -> None:
    r = model()
    # b hears from s1: a's three prefixes and s1's loopback (its own is dropped, s2's cannot pass s1)
    assert r.received("b", "b1", "s1") == 4
    # s1 hears from a: a's three prefixes only (b and s2 via a carry s1's ASN... or are not a's best)
    assert r.received("s1", "a1", "a") == 3


def test_explain_names_the_session_that_is_gone() -> None:
    planned = model()
    live = model(edges=tuple(e for e in EDGES if e.id != "a2"))
    assert explain(planned, live, "a", "b", {"a2": "CABLE-a2"}, []) == {"CABLE-a2"}
    # from b's side nothing is lost towards a's prefixes over s1; over s2 the route to a is gone
    assert explain(planned, live, "b", "a", {"a2": "CABLE-a2"}, []) == {"CABLE-a2"}


def test_explain_names_a_down_origin() -> None:
    planned = model()
    live = Routing({"a": 1, "b": 2, "s1": 100, "s2": 100}, EDGES, {k: v for k, v in ORIGINS.items() if k != "b"})
    assert explain(planned, live, "a", "b", {}, ["b"]) == {"b"}
