"""Connected components and dedup decisions in Spark equal the in-memory union-find, with no driver state."""

from __future__ import annotations

import random

import pytest

from marin_assets.data.dedup.dedup_keys import cluster_representatives
from marin_assets.data.dedup.spark_components import are_stars, component_representatives, star_components
from marin_assets.data.dedup.spark_dedup import EXACT_DUPLICATE, NEAR_DUPLICATE, duplicate_decisions

pytestmark = pytest.mark.slow


def _graph(seed: int) -> list[tuple[str, str]]:
    """Stars, a long chain in shuffled id order (many hops), a cycle, and random sparse edges."""
    rng = random.Random(seed)
    names = [f"n{i:04d}" for i in range(400)]
    rng.shuffle(names)
    chain = names[:80]
    edges = list(zip(chain, chain[1:]))
    edges += [(names[100], names[100 + k]) for k in range(1, 15)]  # a star
    cycle = names[150:170]
    edges += list(zip(cycle, cycle[1:] + cycle[:1]))
    edges += [(rng.choice(names[200:]), rng.choice(names[200:])) for _ in range(120)]  # includes self-loops
    return edges


@pytest.mark.parametrize("local_limit", [0, 10_000], ids=["star-rounds", "one-task-union-find"])
def test_components_equal_union_find_on_chains_stars_cycles(spark, local_limit):
    edges = _graph(0)
    frame = spark.createDataFrame(edges, "a string, b string")
    ours = {r["member"]: r["rep"] for r in component_representatives(frame, local_limit=local_limit).collect()}
    assert ours == {k: v for k, v in cluster_representatives(edges).items() if k != v}
    assert len(ours) > 150


def test_the_edge_count_picks_the_path_and_struct_vertices_keep_their_order(spark):
    edges = [((f"d{i % 7}", "web" if i % 2 else "mirror"), (f"d{(i * 3) % 7}", "web")) for i in range(30)]
    frame = spark.createDataFrame(edges, "a struct<id:string,source:string>, b struct<id:string,source:string>")
    n_edges = len({(max(e), min(e)) for e in edges if e[0] != e[1]})
    star, rounds = star_components(frame, local_limit=n_edges - 1)  # one edge too many for one task
    local, no_rounds = star_components(frame, local_limit=n_edges)
    assert rounds is not None and rounds >= 1 and no_rounds is None
    as_set = lambda f: {(tuple(r["member"]), tuple(r["rep"])) for r in f.collect()}  # noqa: E731
    expected = {(m, r) for m, r in cluster_representatives(edges).items() if m != r}
    assert as_set(star) == as_set(local) == expected and len(expected) > 5
    assert local.schema == star.schema  # the same struct type either way
    empty = spark.createDataFrame([], "a string, b string")
    assert star_components(empty)[0].collect() == [] and star_components(empty, local_limit=0)[0].collect() == []


def test_star_test_refuses_a_vertex_with_two_edges_out_or_edges_both_out_and_in(spark):
    def stars(edges):
        return are_stars(spark.createDataFrame(edges, "src string, dst string"))

    assert stars([]) and stars([("b", "a"), ("c", "a"), ("e", "d")])  # two stars centred on their smallest
    assert not stars([("c", "b"), ("b", "a")])  # a chain: b has an edge in and an edge out
    assert not stars([("c", "a"), ("c", "b")])  # c hangs from two centres


def test_iteration_stops_at_the_first_star_forest_and_fails_past_max_rounds(spark):
    buckets = [("a", "b"), ("a", "c"), ("d", "e"), ("d", "f")]  # LSH bucket stars: no round at all
    frame, rounds = star_components(spark.createDataFrame(buckets, "a string, b string"), local_limit=0)
    assert rounds == 0 and {(r["member"], r["rep"]) for r in frame.collect()} == {("b", "a"), ("c", "a"), ("e", "d"), ("f", "d")}
    chain = [(f"v{i:02d}", f"v{i + 1:02d}") for i in range(40)]
    edges = spark.createDataFrame(chain, "a string, b string")
    frame, rounds = star_components(edges, local_limit=0)
    assert rounds >= 2 and {r["rep"] for r in frame.collect()} == {"v00"} and frame.count() == 40
    # one round fewer than it needed: not a star forest yet, so it must fail rather than answer
    with pytest.raises(RuntimeError, match="did not converge"):
        star_components(edges, max_rounds=rounds - 1, local_limit=0)


def _kept(spark, rows):
    return spark.createDataFrame(rows, "id string, source string, exact_key string, bands array<long>")


def test_scope_decides_whether_a_document_in_two_sources_survives_twice(spark):
    rows = [
        ("a1", "web", "k-same", [1, 2]),
        ("b7", "mirror", "k-same", [1, 2]),  # the same text in another source
        ("a2", "web", "k-near1", [5, 6]),
        ("a0", "mirror", "k-near2", [5, 9]),  # near duplicate of web/a2 (one shared band), other source
        ("a2", "mirror", "k-other", [7, 8]),  # the same id in another source is another document
        ("a3", "web", "k-same", [1, 3]),  # exact duplicate of web/a1 inside web
    ]
    decide = {scope: {(r["source"], r["id"]): (r["dup_reason"], r["kept_source"], r["kept_id"])
                      for r in duplicate_decisions(_kept(spark, rows), scope, True, True).collect()}
              for scope in ("source", "global")}  # fmt: skip
    assert decide["source"] == {("web", "a3"): (EXACT_DUPLICATE, "web", "a1")}
    assert decide["global"] == {
        ("web", "a3"): (EXACT_DUPLICATE, "web", "a1"),
        ("mirror", "b7"): (EXACT_DUPLICATE, "web", "a1"),  # smallest (id, source) is kept
        ("web", "a2"): (NEAR_DUPLICATE, "mirror", "a0"),
    }


def test_an_exact_duplicate_names_the_document_that_remains(spark):
    # x2 is an exact copy of x1; x1 is a near duplicate of x0: both go, and both name x0.
    rows = [("x1", "s", "k1", [1, 2]), ("x2", "s", "k1", [1, 2]), ("x0", "s", "k0", [1, 4])]
    got = {r["id"]: (r["dup_reason"], r["kept_id"]) for r in duplicate_decisions(_kept(spark, rows), "source", True,
                                                                                True).collect()}  # fmt: skip
    assert got == {"x2": (EXACT_DUPLICATE, "x0"), "x1": (NEAR_DUPLICATE, "x0")}
    with pytest.raises(ValueError, match="scope"):
        duplicate_decisions(_kept(spark, rows), "corpus", True, True)
