"""The Spark cleaning job: sources' files -> cleaned / rejected / quarantined Parquet + counts.

files (list_source_files) -> records (read_file, inside Spark) -> RecordCleaner (extraction,
normalisation, language, filters, dedup keys; mapInPandas) -> dedup decisions in Spark
(spark_dedup: exact keys, then LSH buckets and connected components; the smallest (id, source)
survives; within each source or across all, by recipe.dedup.scope) -> deterministic Parquet files. A duplicate's rejected row names the kept document (kept_id,
kept_source). Counts conserve: records in = kept + rejected + quarantined.
"""

from __future__ import annotations

import math
import posixpath
from collections import Counter

from marin_assets.core.schemas import DOCUMENT_SCHEMA, QUARANTINE_SCHEMA, REJECTED_SCHEMA
from marin_assets.data.cleaning_recipe import CleaningRecipe
from marin_assets.data.cleaning_rows import KEPT, QUARANTINED, REJECTED, RecordCleaner, record_tuple
from marin_assets.data.parquet_output import write_parquet
from marin_assets.data.readers import list_source_files, read_file, relative_name
from marin_assets.data.sources import SourceSpec
from marin_assets.data.spark_dedup import (  # noqa: F401 - lsh_buckets and near_duplicates: public for checks
    EXACT_DUPLICATE, NEAR_DUPLICATE, duplicate_decisions, lsh_buckets, near_duplicates,
)

RECORD_SCHEMA = ("kind string, id string, url string, content string, content_type string, metadata string, "
                 "raw_length long, file string, offset long, reason string, excerpt string")  # fmt: skip
ROW_SCHEMA = ("status string, id string, url string, text string, metadata string, raw_length long, "
              "reason string, file string, offset long, excerpt string, exact_key string, bands array<long>")  # fmt: skip


def _read_records(spec: SourceSpec, max_record_bytes: int):
    def read(path: str):
        name = relative_name(path, spec)
        for record in read_file(path, spec, max_record_bytes):
            yield record_tuple(record, name)

    return read


def _source_rows(spark, spec: SourceSpec, recipe: CleaningRecipe):
    """One source's records as cleaned rows (ROW_SCHEMA + source), computed on the executors."""
    from pyspark.sql import functions as F

    files = list_source_files(spec)
    if not files:
        raise ValueError(f"source {spec.name!r}: no files match {spec.uri}")
    records = spark.sparkContext.parallelize(files, len(files)).flatMap(
        _read_records(spec, recipe.max_record_bytes)
    )
    raw = spark.createDataFrame(records, RECORD_SCHEMA)  # from an RDD: the records stay on the executors
    if len(files) < recipe.spark.partitions:  # spread a few big files over the workers
        raw = raw.repartition(recipe.spark.partitions)
    cleaner = RecordCleaner(recipe)
    return raw.mapInPandas(cleaner.clean_batches, ROW_SCHEMA).withColumn("source", F.lit(spec.name))


def clean_source(spark, spec: SourceSpec, recipe: CleaningRecipe, out_dir: str) -> dict:
    """Clean one source into out_dir/{documents,rejected,quarantine}/part-*.parquet; return the stats."""
    return clean_sources(spark, [spec], recipe, {spec.name: out_dir})[spec.name]


def clean_sources(spark, specs: list[SourceSpec], recipe: CleaningRecipe, out_dirs: dict[str, str]) -> dict:
    """Clean `specs` in one Spark job, dedup by recipe.dedup.scope (within each source, or across all
    of them), and write the sources named in out_dirs; the others only take part in global dedup."""
    from functools import reduce

    from pyspark.sql import functions as F

    rows = reduce(lambda a, b: a.unionByName(b), [_source_rows(spark, spec, recipe) for spec in specs]).persist()
    try:
        dedup = recipe.dedup
        decisions = duplicate_decisions(rows.where(F.col("status") == KEPT), dedup.scope, dedup.exact,
                                        dedup.near).persist()  # fmt: skip
        try:
            return {name: _write_source(rows, decisions, name, recipe, out_dir) for name, out_dir in out_dirs.items()}
        finally:
            decisions.unpersist()
    finally:
        rows.unpersist()


def _write_source(all_rows, decisions, name: str, recipe: CleaningRecipe, out_dir: str) -> dict:
    from pyspark.sql import functions as F

    rows = all_rows.where(F.col("source") == name)
    dropped = decisions.where(F.col("source") == name).drop("source")
    all_kept = rows.where(F.col("status") == KEPT)
    doc_cols = ["id", "source", "url", "text", "metadata", "raw_length"]
    no_kept = [F.lit(None).cast("string").alias("kept_id"), F.lit(None).cast("string").alias("kept_source")]
    final_kept = all_kept.join(dropped, "id", "left_anti").select(*doc_cols)
    dup_rows = all_kept.join(dropped, "id").select(*doc_cols, F.col("dup_reason").alias("reason"), "kept_id",
                                                   "kept_source")  # fmt: skip
    rejected = rows.where(F.col("status") == REJECTED).select(*doc_cols, "reason", *no_kept).unionByName(dup_rows)
    quarantined = rows.where(F.col("status") == QUARANTINED).select("source", "file", "offset", "reason", "excerpt")

    # Bounded results only: one row per rule / quarantine code (a reason's detail after ':' stays out).
    rule = F.when(F.col("status") == QUARANTINED, F.substring_index("reason", ":", 1)).otherwise(F.col("reason"))
    by_rule = rows.groupBy("status", rule.alias("rule")).count().collect()
    counts = Counter({(r["status"], r["rule"]): r["count"] for r in by_rule})
    dup_counts = Counter({r["dup_reason"]: r["count"] for r in dropped.groupBy("dup_reason").count().collect()})
    n_duplicates = sum(dup_counts.values())
    n_rejected = sum(c for (status, _), c in counts.items() if status == REJECTED) + n_duplicates

    def files_for(n_rows: int) -> int:
        return max(1, math.ceil(n_rows / recipe.spark.rows_per_file))

    def table(name: str) -> str:
        return posixpath.join(out_dir, name)

    written = {
        "documents": write_parquet(final_kept, DOCUMENT_SCHEMA, table("documents"),
                                   files_for(counts[(KEPT, None)] - n_duplicates), "id", ["id", "text"]),
        "rejected": write_parquet(rejected, REJECTED_SCHEMA, table("rejected"), files_for(n_rejected), "id",
                                  ["id", "reason", "text"]),
        "quarantine": write_parquet(quarantined, QUARANTINE_SCHEMA, table("quarantine"), 1, "file", ["file", "offset"]),
    }  # fmt: skip
    return _stats(counts, dup_counts, written)


def _stats(counts: Counter, dup_counts: Counter, written: dict) -> dict:
    rejected_by_rule = Counter({reason: c for (status, reason), c in counts.items() if status == REJECTED})
    rejected_by_rule.update(dup_counts)
    quarantined_by_code = Counter()
    for (status, reason), c in counts.items():
        if status == QUARANTINED:
            quarantined_by_code[reason.split(":", 1)[0]] += c
    stats = {
        "records_in": sum(counts.values()),
        "kept": written["documents"],
        "rejected": written["rejected"],
        "quarantined": written["quarantine"],
        "rejected_by_rule": dict(sorted(rejected_by_rule.items())),
        "quarantined_by_reason": dict(sorted(quarantined_by_code.items())),
    }
    stats["conserved"] = stats["records_in"] == stats["kept"] + stats["rejected"] + stats["quarantined"]
    return stats
