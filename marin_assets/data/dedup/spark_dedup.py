"""Dedup decisions in Spark: which kept documents are duplicates, and which document was kept instead.

exact: the smallest document per exact key survives. near: LSH band buckets -> star edges to each
bucket's smallest document -> connected components in Spark (spark_components) -> the smallest
document per component survives. Scope `source` finds duplicates within a source only, `global`
across every source in the frame. A document is the pair (id, source), ordered by id then source,
so equal ids in two sources stay two documents. Everything stays in DataFrames: nothing is collected.
"""

from __future__ import annotations

from marin_assets.data.dedup.spark_components import component_representatives

EXACT_DUPLICATE = "dedup:exact_duplicate"
NEAR_DUPLICATE = "dedup:near_duplicate"
SCOPES = ("source", "global")
DECISION_COLUMNS = ("id", "source", "dup_reason", "kept_id", "kept_source")


def lsh_bucket_edges(docs, node: str = "id", by: tuple[str, ...] = ()):
    """(a, b): every node b of an LSH bucket (a band key it shares with other nodes) but the bucket's
    smallest node a, with a. A window over (band, key): one shuffle and a sort, no per-bucket list
    (collect_list's object aggregation falls back to sorting past 128 buckets a task, and then
    needs an explode and another pass)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    exploded = docs.where(F.col("bands").isNotNull()).select(*by, node, F.posexplode("bands").alias("band", "key"))
    smallest = F.min(node).over(Window.partitionBy(*by, "band", "key"))
    return exploded.select(smallest.alias("a"), F.col(node).alias("b")).where(F.col("a") != F.col("b"))


def near_duplicates(docs, node: str = "id", by: tuple[str, ...] = (), edge_filter=None):
    """(member, rep): each node of an LSH-connected cluster but its smallest, with that smallest node.

    `edge_filter` (a DataFrame of edges a, b -> the edges to merge on) can refuse candidate pairs,
    e.g. those whose exact Jaccard is below a threshold (dedup_precision.jaccard_edge_filter).
    """
    edges = lsh_bucket_edges(docs, node, by)
    if edge_filter is not None:
        edges = edge_filter(edges)
    return component_representatives(edges)


def duplicate_decisions(kept, scope: str, exact: bool, near: bool, edge_filter=None):
    """DataFrame of DECISION_COLUMNS: every duplicate among `kept` (id, source, exact_key, bands) and
    the document kept in its place (for an exact duplicate whose survivor is itself a near duplicate,
    the near cluster's survivor: the document that remains)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if scope not in SCOPES:
        raise ValueError(f"dedup scope {scope!r} is not one of {SCOPES}")
    by = ("source",) if scope == "source" else ()
    docs = kept.select(F.struct("id", "source").alias("doc"), "exact_key", "bands")
    empty = docs.sparkSession.createDataFrame([], "doc struct<id:string,source:string>, kept "
                                                  "struct<id:string,source:string>, dup_reason string")  # fmt: skip
    exact_rows = near_rows = empty
    if exact:
        within = [F.col("doc.source")] if by else []
        marked = docs.withColumn("kept", F.min("doc").over(Window.partitionBy(*within, "exact_key")))
        exact_rows = marked.where(F.col("doc") != F.col("kept")).select("doc", "kept", F.lit(EXACT_DUPLICATE).alias("dup_reason"))
        docs = marked.where(F.col("doc") == F.col("kept")).drop("kept")
    if near:
        if by:
            docs = docs.withColumn("source", F.col("doc.source"))
        clusters = near_duplicates(docs, "doc", by, edge_filter)
        near_rows = clusters.select(F.col("member").alias("doc"), F.col("rep").alias("kept"),
                                    F.lit(NEAR_DUPLICATE).alias("dup_reason"))  # fmt: skip
        survivor = clusters.select(F.col("member").alias("kept"), F.col("rep").alias("final"))
        exact_rows = exact_rows.join(survivor, "kept", "left").select(
            "doc", F.coalesce("final", "kept").alias("kept"), "dup_reason"
        )
    return exact_rows.unionByName(near_rows).select(
        F.col("doc.id").alias("id"), F.col("doc.source").alias("source"), "dup_reason",
        F.col("kept.id").alias("kept_id"), F.col("kept.source").alias("kept_source"),
    )  # fmt: skip
