"""The Spark cleaning job: one source's files -> cleaned / rejected / quarantined Parquet + counts.

files (list_source_files) -> records (read_file, inside Spark) -> later records with an id seen
before quarantined as duplicate_id (a window by id) -> RecordCleaner (extraction,
normalisation, language, filters, dedup keys; mapInPandas) -> exact dedup (smallest id per key)
-> near dedup (LSH band buckets in Spark, union-find on the candidate pairs, smallest id per
cluster) -> deterministic Parquet files. Counts conserve: records in = kept + rejected + quarantined.
"""

from __future__ import annotations

import json
import math
import posixpath
from collections import Counter

from marin_assets.core.schemas import DOCUMENT_SCHEMA, QUARANTINE_SCHEMA, REJECTED_SCHEMA
from marin_assets.data.cleaning_recipe import CleaningRecipe
from marin_assets.data.cleaning_rows import KEPT, QUARANTINED, REJECTED, RecordCleaner, record_tuple
from marin_assets.data.dedup import cluster_representatives
from marin_assets.data.duplicate_ids import quarantine_duplicate_ids
from marin_assets.data.file_errors import FILE_LEVEL_CODES, file_error_rows
from marin_assets.data.formats.repairs import REPAIRS_KEY
from marin_assets.data.parquet_output import write_parquet
from marin_assets.data.readers import list_source_files_and_skipped, read_file, relative_name
from marin_assets.data.record_counts import count_records
from marin_assets.data.sources import SourceSpec

EXACT_DUPLICATE = "dedup:exact_duplicate"
NEAR_DUPLICATE = "dedup:near_duplicate"
RECORD_SCHEMA = ("kind string, id string, url string, content string, content_type string, metadata string, "
                 "raw_length long, file string, offset long, reason string, excerpt string")  # fmt: skip
ROW_SCHEMA = ("status string, id string, url string, text string, metadata string, raw_length long, "
              "reason string, value string, file string, offset long, excerpt string, exact_key string, "
              "bands array<long>")  # fmt: skip
EXAMPLES_PER_RULE = 3  # rejected documents shown per rule in the materialization (smallest ids: deterministic)
EXCERPT_CHARS = 200


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


def clean_source(spark, spec: SourceSpec, recipe: CleaningRecipe, out_dir: str) -> dict:
    """Clean one source into out_dir/{documents,rejected,quarantine}/part-*.parquet; return the stats.

    stats["reader_counts"] holds the records of each file as counted by format (record_counts),
    apart from the readers, so counts_conserve can catch records the reading or cleaning lost.
    """
    files, skipped = list_source_files_and_skipped(spec)
    if not files:
        raise ValueError(f"source {spec.name!r}: no files match {spec.uri}")
    reader_counts = count_source_records(spark, spec, files)
    records = spark.sparkContext.parallelize(files, len(files)).flatMap(
        _read_records(spec, recipe.max_record_bytes)
    )
    raw = quarantine_duplicate_ids(spark.createDataFrame(records, RECORD_SCHEMA), recipe.spark.partitions)
    cleaner = RecordCleaner(recipe, spec.name)
    rows = raw.mapInPandas(cleaner.clean_batches, ROW_SCHEMA).persist()
    try:
        stats = _dedup_and_write(spark, spec, recipe, rows, out_dir)
        stats.update(_file_level(rows, [relative_name(f, spec) for f in skipped]))
    finally:
        rows.unpersist()
    counted = sum(reader_counts.values())
    conserved = stats["conserved"] and counted == stats["records_in"]
    return {**stats, "records_counted": counted, "conserved": conserved, "reader_counts": reader_counts}


def count_source_records(spark, spec: SourceSpec, files: list[str]) -> dict[str, int]:
    """{file relative name: records}, one Spark task per file (the files are read a second time)."""
    def count(path: str):
        return relative_name(path, spec), count_records(path, spec)

    return dict(sorted(spark.sparkContext.parallelize(files, len(files)).map(count).collect()))


def _dedup_and_write(spark, spec: SourceSpec, recipe: CleaningRecipe, rows, out_dir: str) -> dict:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    all_kept = kept = rows.where(F.col("status") == KEPT)
    dropped = spark.createDataFrame([], "id string, dup_reason string, dup_value string")
    if recipe.dedup.exact:
        first = F.min("id").over(Window.partitionBy("exact_key"))
        marked = kept.withColumn("_first", first)
        exact = marked.where(F.col("id") != F.col("_first")).select(
            "id", F.lit(EXACT_DUPLICATE).alias("dup_reason"), F.concat(F.lit("same text as "), "_first").alias("dup_value")
        )
        dropped = dropped.unionByName(exact)
        kept = marked.where(F.col("id") == F.col("_first")).drop("_first")
    if recipe.dedup.near:
        near_ids = near_duplicate_ids(kept)
        if near_ids:
            near = spark.createDataFrame([(i, NEAR_DUPLICATE, None) for i in near_ids],
                                         "id string, dup_reason string, dup_value string")  # fmt: skip
            dropped = dropped.unionByName(near)
    dropped = dropped.persist()
    source = F.lit(spec.name).alias("source")
    doc_cols = [F.col("id"), source, "url", "text", "metadata", "raw_length"]
    final_kept = all_kept.join(dropped, "id", "left_anti").select(*doc_cols)
    dup_rows = all_kept.join(dropped, "id").select(*doc_cols, F.col("dup_reason").alias("reason"),
                                                   F.col("dup_value").alias("value"))  # fmt: skip
    rejected_rows = rows.where(F.col("status") == REJECTED).select(*doc_cols, "reason", "value").unionByName(dup_rows)
    examples = rejected_examples(rejected_rows)
    rejected = rejected_rows.drop("value")
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
    return {**_stats(counts, dup_counts, written), "rejected_examples": examples}


def rejected_examples(rejected, per_rule: int = EXAMPLES_PER_RULE) -> list[dict]:
    """A few rejected documents per rule (smallest ids): rule, id, url, excerpt, the value that tripped it."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rank = F.row_number().over(Window.partitionBy("reason").orderBy("id"))
    picked = rejected.withColumn("_rank", rank).where(F.col("_rank") <= per_rule)
    rows = picked.select(F.col("reason").alias("rule"), "id", "url", F.substring("text", 1, EXCERPT_CHARS).alias("excerpt"),
                         "value").collect()  # fmt: skip
    return sorted((row.asDict() for row in rows), key=lambda r: (r["rule"], r["id"]))


def _file_level(rows, skipped: list[str]) -> dict:
    """Files with errors (file_errors.COLUMNS) and text repairs summed by reason (both small to collect)."""
    from pyspark.sql import functions as F

    code = F.substring_index("reason", ":", 1)
    bad = rows.where((F.col("status") == QUARANTINED) & code.isin(*FILE_LEVEL_CODES)).select("file", "offset", "reason")
    repaired = Counter()
    for row in rows.where(F.col("metadata").contains(f'"{REPAIRS_KEY}"')).select("metadata").collect():
        repaired.update(json.loads(row["metadata"]).get(REPAIRS_KEY, {}))
    return {
        "file_errors": file_error_rows([tuple(r) for r in bad.collect()], skipped),
        "repaired_by_reason": dict(sorted(repaired.items())),
    }


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
