"""How trustworthy near dedup is (pure): exact Jaccard of the LSH candidate pairs a run produced.

MinHash LSH makes two documents candidates when one band of their signatures agrees; a pair is a true
near duplicate when the exact Jaccard similarity of their shingle sets (word n-grams, lower-cased, as
MinHash hashes them) reaches the recipe threshold. Precision = share of sampled pairs that do.
"""

from __future__ import annotations


from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa

PAIR_COLUMNS = ["id_a", "id_b", "text_a", "text_b"]
PAIRS_TABLE = "dedup_pairs"  # cleaned/<source>/dedup_pairs/part-00000.parquet: the sampled candidate pairs
PAIR_SCHEMA = pa.schema([(c, pa.string()) for c in PAIR_COLUMNS])


def shingle_set(text: str, shingle_size: int) -> set[tuple[str, ...]]:
    """Word n-grams of the lower-cased text; a shorter text is one shingle of all its words."""
    words = text.lower().split()
    if not words:
        return set()
    if len(words) < shingle_size:
        return {tuple(words)}
    return {tuple(words[i : i + shingle_size]) for i in range(len(words) - shingle_size + 1)}


def jaccard(a: set, b: set) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def exact_jaccard(text_a: str, text_b: str, shingle_size: int) -> float:
    return jaccard(shingle_set(text_a, shingle_size), shingle_set(text_b, shingle_size))


@dataclass
class PrecisionReport:
    pairs: int
    true_pairs: int
    precision: float | None  # None: no candidate pairs (nothing was merged, nothing to be wrong about)
    worst: list[dict]
    mean_jaccard: float | None


def precision_report(pairs: Iterable[dict], shingle_size: int, threshold: float, worst: int = 5) -> PrecisionReport:
    """pairs: dicts of PAIR_COLUMNS. Sorted by similarity, the least similar `worst` pairs are reported."""
    scored = sorted(
        ({"id_a": p["id_a"], "id_b": p["id_b"], "jaccard": round(exact_jaccard(p["text_a"], p["text_b"], shingle_size), 4),
          "excerpt_a": p["text_a"][:120], "excerpt_b": p["text_b"][:120]} for p in pairs),
        key=lambda p: (p["jaccard"], p["id_a"], p["id_b"]),
    )  # fmt: skip
    if not scored:
        return PrecisionReport(0, 0, None, [], None)
    true_pairs = sum(p["jaccard"] >= threshold for p in scored)
    mean = sum(p["jaccard"] for p in scored) / len(scored)
    return PrecisionReport(len(scored), true_pairs, true_pairs / len(scored), scored[:worst], round(mean, 4))


def candidate_pair_sample(kept, sample_pairs: int, seed: int = 1):
    """Spark: a bounded, deterministic sample of the run's LSH candidate pairs (rep, member) with texts.

    The same star edges near dedup merges on (each bucket's smallest id with every other member), picked
    by a hash of the pair, not by collecting anything on the driver.
    """
    from pyspark.sql import functions as F

    members = kept.where(F.col("bands").isNotNull()).select("id", F.posexplode("bands").alias("band", "key"))
    buckets = members.groupBy("band", "key").agg(F.min("id").alias("rep"), F.collect_set("id").alias("ids"))
    edges = (
        buckets.where(F.size("ids") > 1)
        .select(F.col("rep").alias("id_a"), F.explode("ids").alias("id_b"))
        .where(F.col("id_a") != F.col("id_b"))
        .distinct()
    )
    if sample_pairs >= 2**31 - 1:
        sample = edges
    else:
        sample = edges.orderBy(F.xxhash64("id_a", "id_b", F.lit(seed)), "id_a", "id_b").limit(sample_pairs)
    texts = kept.select("id", "text")
    return (
        sample.join(texts.withColumnRenamed("id", "id_a").withColumnRenamed("text", "text_a"), "id_a")
        .join(texts.withColumnRenamed("id", "id_b").withColumnRenamed("text", "text_b"), "id_b")
        .select(*PAIR_COLUMNS)
    )


def jaccard_edge_filter(kept, shingle_size: int, threshold: float):
    """An edge filter for spark_dedup.near_duplicates (edges a, b of (id, source) structs) that merges
    only candidate pairs whose exact Jaccard reaches the threshold (recipe switch verify_pairs).
    Scored in Spark (mapInPandas over the joined texts); nothing per pair reaches the driver."""
    import pandas as pd
    from pyspark.sql import functions as F

    texts = kept.select("id", "source", "text")
    ends = ("a_id", "a_source", "b_id", "b_source")

    def score(frames):
        for frame in frames:
            sims = [exact_jaccard(a, b, shingle_size) for a, b in zip(frame["text_a"], frame["text_b"])]
            yield pd.DataFrame({**{c: frame[c] for c in ends}, "jaccard": sims})

    def keep(edges):
        flat = edges.select(F.col("a.id").alias("a_id"), F.col("a.source").alias("a_source"),
                            F.col("b.id").alias("b_id"), F.col("b.source").alias("b_source"))
        joined = (flat.join(texts.toDF("a_id", "a_source", "text_a"), ["a_id", "a_source"])
                  .join(texts.toDF("b_id", "b_source", "text_b"), ["b_id", "b_source"]))
        schema = "a_id string, a_source string, b_id string, b_source string, jaccard double"
        scored = joined.select(*ends, "text_a", "text_b").mapInPandas(score, schema)
        verified = scored.where(F.col("jaccard") >= threshold)
        # the cost users see, in one job: two counts would join and score every pair twice
        passed = F.count(F.when(F.col("jaccard") >= threshold, 1))
        n_scored, n_verified = scored.agg(F.count(F.lit(1)), passed).first()
        # counts only: stats.json is part of the output's hash, so no wall time goes in it
        keep.cost = {"edges_scored": n_scored, "edges_refused": n_scored - n_verified}
        return verified.select(
            F.struct(F.col("a_id").alias("id"), F.col("a_source").alias("source")).alias("a"),
            F.struct(F.col("b_id").alias("id"), F.col("b_source").alias("source")).alias("b"),
        )

    keep.cost = {}
    return keep
