"""The Spark cleaning job: one source's files -> cleaned / rejected / quarantined Parquet + counts.

files (list_source_files) -> records (read_file, inside Spark) -> RecordCleaner (extraction,
normalisation, language, filters, dedup keys; mapInPandas) -> exact dedup (smallest id per key)
-> near dedup (LSH band buckets in Spark, union-find on the candidate pairs, smallest id per
cluster) -> deterministic Parquet files. Counts conserve: records in = kept + rejected + quarantined.
"""

from __future__ import annotations

import math
import posixpath
from collections import Counter

from marin_assets.core.schemas import DOCUMENT_SCHEMA, QUARANTINE_SCHEMA, REJECTED_SCHEMA
from marin_assets.data import curation_job
from marin_assets.data.cleaning_recipe import CleaningRecipe
from marin_assets.data.cleaning_rows import KEPT, QUARANTINED, REJECTED, RecordCleaner, record_tuple
from marin_assets.data.dedup import cluster_representatives
from marin_assets.data.dedup_precision import PAIR_SCHEMA, PAIRS_TABLE, candidate_pair_sample, verified_near_duplicate_ids
from marin_assets.data.parquet_output import write_parquet
from marin_assets.data.readers import list_source_files, read_file, relative_name
from marin_assets.data.sources import SourceSpec

EXACT_DUPLICATE = "dedup:exact_duplicate"
NEAR_DUPLICATE = "dedup:near_duplicate"
RECORD_SCHEMA = ("kind string, id string, url string, content string, content_type string, metadata string, "
                 "raw_length long, file string, offset long, reason string, excerpt string")  # fmt: skip
ROW_SCHEMA = ("status string, id string, url string, text string, metadata string, raw_length long, "
              "reason string, file string, offset long, excerpt string, exact_key string, bands array<long>, "
              "step_counts string, quality_score double")  # fmt: skip


def _read_records(spec: SourceSpec, max_record_bytes: int):
    def read(path: str):
        name = relative_name(path, spec)
        for record in read_file(path, spec, max_record_bytes):
            yield record_tuple(record, name)

    return read


def lsh_buckets(docs):
    """LSH buckets with more than one document: (band, key, rep = smallest id, ids)."""
    from pyspark.sql import functions as F

    return (
        docs.where(F.col("bands").isNotNull())
        .select("id", F.posexplode("bands").alias("band", "key"))
        .groupBy("band", "key")
        .agg(F.min("id").alias("rep"), F.collect_set("id").alias("ids"))
        .where(F.size("ids") > 1)
    )


def near_duplicate_ids(docs) -> list[str]:
    """ids to drop as near duplicates: all but the smallest id of each LSH-connected cluster.

    Each bucket contributes star edges (rep, member), so the pairs collected are O(documents).
    """
    from pyspark.sql import functions as F

    buckets = lsh_buckets(docs)
    edges = buckets.select("rep", F.explode("ids").alias("id")).where(F.col("id") != F.col("rep")).distinct()
    pairs = [(r["rep"], r["id"]) for r in edges.collect()]
    return sorted(cluster_representatives(pairs))


def clean_source(spark, spec: SourceSpec, recipe: CleaningRecipe, out_dir: str, eval_index: dict | None = None,
                 quality_model: bytes | None = None) -> dict:  # fmt: skip
    """Clean one source into out_dir/{documents,rejected,quarantine}/part-*.parquet; return the stats.

    eval_index ({eval set: n-gram hashes}) and quality_model (fastText bytes) feed the curation steps.
    """
    files = list_source_files(spec)
    if not files:
        raise ValueError(f"source {spec.name!r}: no files match {spec.uri}")
    records = spark.sparkContext.parallelize(files, len(files)).flatMap(
        _read_records(spec, recipe.max_record_bytes)
    )
    raw = spark.createDataFrame(records, RECORD_SCHEMA)
    if len(files) < recipe.spark.partitions:  # spread a few big files over the workers
        raw = raw.repartition(recipe.spark.partitions)
    cleaner = RecordCleaner(recipe, curation_job.curation_for(spark, spec.name, recipe, eval_index, quality_model))
    rows = raw.mapInPandas(cleaner.clean_batches, ROW_SCHEMA).persist()
    try:
        return _dedup_and_write(spark, spec, recipe, rows, out_dir)
    finally:
        rows.unpersist()


def _dedup_and_write(spark, spec: SourceSpec, recipe: CleaningRecipe, rows, out_dir: str) -> dict:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    all_kept = kept = rows.where(F.col("status") == KEPT)
    dropped = spark.createDataFrame([], "id string, dup_reason string")
    if recipe.dedup.exact:
        first = F.min("id").over(Window.partitionBy("exact_key"))
        marked = kept.withColumn("_first", first)
        exact = marked.where(F.col("id") != F.col("_first")).select("id", F.lit(EXACT_DUPLICATE).alias("dup_reason"))
        dropped = dropped.unionByName(exact)
        kept = marked.where(F.col("id") == F.col("_first")).drop("_first")
    if recipe.dedup.near:  # a bounded sample of the LSH candidate pairs, for the dedup_precision check
        pairs = candidate_pair_sample(kept, recipe.dedup_precision.sample_pairs, recipe.dedup.seed)
        n_pairs = write_parquet(pairs, PAIR_SCHEMA, posixpath.join(out_dir, PAIRS_TABLE), 1, "id_a", ["id_a", "id_b"])
        if recipe.dedup_precision.verify_pairs:  # exact Jaccard on every candidate pair before removal
            near_ids, verification = verified_near_duplicate_ids(kept, recipe.dedup.shingle_size,
                                                                 recipe.dedup_precision.jaccard_threshold)  # fmt: skip
        else:
            near_ids = near_duplicate_ids(kept)
        if near_ids:
            near = spark.createDataFrame([(i, NEAR_DUPLICATE) for i in near_ids], "id string, dup_reason string")
            dropped = dropped.unionByName(near)
    dropped = dropped.persist()
    source = F.lit(spec.name).alias("source")
    doc_cols = [F.col("id"), source, "url", "text", "metadata", "raw_length", "quality_score"]
    final_kept = all_kept.join(dropped, "id", "left_anti").select(*doc_cols)
    dup_rows = all_kept.join(dropped, "id").select(*doc_cols, F.col("dup_reason").alias("reason"))
    rejected = rows.where(F.col("status") == REJECTED).select(*doc_cols, "reason").unionByName(dup_rows)
    quarantined = rows.where(F.col("status") == QUARANTINED).select(source, "file", "offset", "reason", "excerpt")

    counts = Counter({(r["status"], r["reason"]): r["count"] for r in rows.groupBy("status", "reason").count().collect()})
    dup_counts = Counter({r["dup_reason"]: r["count"] for r in dropped.groupBy("dup_reason").count().collect()})
    dropped.unpersist()
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
    stats = _stats(counts, dup_counts, written)
    stats.update(curation_job.step_stats(rows))
    if recipe.dedup.near:
        stats["dedup_pairs_sampled"] = n_pairs
        if recipe.dedup_precision.verify_pairs:
            stats["near_dedup_verification"] = verification
    return stats


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
