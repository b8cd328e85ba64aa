"""Duplicate ids within a source: the first record (by file, then offset) keeps the id; later ones
are quarantined as `duplicate_id`, naming where the first one is.

Quarantine rather than rename: a renamed id (id + file + offset) would hide that the source has a
problem, and downstream joins on the source's own ids would match the wrong record. Runs in the
Spark job as a window over all records (ids are seen across partitions), not in driver state.
"""

from __future__ import annotations

DUPLICATE_ID = "duplicate_id"
EXCERPT_CHARS = 200


def quarantine_duplicate_ids(raw, partitions: int):
    """raw records (cleaning_job.RECORD_SCHEMA) -> the same rows, later duplicates as quarantine rows.

    Hash-partitioning by id into `partitions` is the window's one shuffle (it also spreads a source of
    few big files over the workers); the cleaning job then shuffles by content (cleaning_job).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    by_id = Window.partitionBy("id").orderBy("file", "offset")
    is_record = F.col("kind") == "record"
    marked = raw.repartition(partitions, "id").withColumn("_n", F.when(is_record, F.row_number().over(by_id))).withColumn(
        "_first", F.when(is_record, F.first(F.concat_ws("@", "file", F.col("offset").cast("string"))).over(by_id))
    )
    dup = F.coalesce(F.col("_n") > 1, F.lit(False))
    reason = F.concat(F.lit(f"{DUPLICATE_ID}: "), F.col("id"), F.lit(" (first at "), F.col("_first"), F.lit(")"))

    def unless_dup(name: str):
        return F.when(dup, F.lit(None)).otherwise(F.col(name)).alias(name)

    return marked.select(
        F.when(dup, F.lit("quarantine")).otherwise(F.col("kind")).alias("kind"),
        "id",
        *(unless_dup(c) for c in ("url", "content", "content_type", "metadata", "raw_length")),
        "file",
        "offset",
        F.when(dup, reason).otherwise(F.col("reason")).alias("reason"),
        F.when(dup, F.substring("content", 1, EXCERPT_CHARS)).otherwise(F.col("excerpt")).alias("excerpt"),
    )
