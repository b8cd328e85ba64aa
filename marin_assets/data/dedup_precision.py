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


def verified_near_duplicate_ids(kept, shingle_size: int, threshold: float) -> tuple[list[str], dict]:
    """Near dedup that merges only candidate pairs whose exact Jaccard reaches the threshold (recipe switch).

    The star edges are scored in Spark (mapInPandas over the joined texts); only the kept edges, O(documents),
    reach the driver for union-find. Returns the ids to drop and the cost: edges scored, edges refused, seconds.
    """
    import time

    import pandas as pd

    from marin_assets.data.dedup import cluster_representatives

    start = time.perf_counter()
    pairs = candidate_pair_sample(kept, 2**31 - 1)  # every candidate edge, not a sample

    def score(frames):
        for frame in frames:
            sims = [exact_jaccard(a, b, shingle_size) for a, b in zip(frame["text_a"], frame["text_b"])]
            yield pd.DataFrame({"id_a": frame["id_a"], "id_b": frame["id_b"], "jaccard": sims})

    scored = pairs.mapInPandas(score, "id_a string, id_b string, jaccard double").collect()
    edges = [(r["id_a"], r["id_b"]) for r in scored if r["jaccard"] >= threshold]
    cost = {"edges_scored": len(scored), "edges_refused": len(scored) - len(edges),
            "seconds": round(time.perf_counter() - start, 3)}  # fmt: skip
    return sorted(cluster_representatives(edges)), cost
