"""The Spark cleaning job: sources' files -> cleaned / rejected / quarantined Parquet + counts.

files (list_source_files) -> records (read_file, inside Spark) -> later records with an id seen
before quarantined as duplicate_id (a window by id) -> records shuffled by content, so that
byte-identical copies meet in one task and are cleaned once (outcome_memo) -> RecordCleaner
(extraction, normalisation, language, filters, dedup keys; mapInArrow) -> dedup decisions in
Spark (spark_dedup: exact keys, then LSH buckets and connected components; the smallest (id,
source) survives; within each source or across all, by recipe.dedup.scope) -> deterministic
Parquet files. A duplicate's rejected row names the kept document (kept_id, kept_source). Counts
conserve: records in = kept + rejected + quarantined, and the records counted per file by format
(record_counts, apart from the readers; counted in the read tasks themselves, so no second pass
over the files) must equal the records the cleaner saw.
"""

from __future__ import annotations

import posixpath
from collections import Counter, defaultdict
from functools import partial, reduce

from marin_assets.core.schemas import DOCUMENT_SCHEMA, QUARANTINE_SCHEMA, REJECTED_SCHEMA
from marin_assets.data.curate import curation_job
from marin_assets.data.clean.cleaning_recipe import CleaningRecipe
from marin_assets.data.clean.cleaning_report import file_level, rejected_examples
from marin_assets.data.dedup.dedup_precision import PAIR_SCHEMA, PAIRS_TABLE, candidate_pair_sample, jaccard_edge_filter
from marin_assets.data.clean.cleaning_rows import IGNORED, KEPT, QUARANTINED, REJECTED, RecordCleaner
from marin_assets.data.clean.duplicate_ids import quarantine_duplicate_ids
from marin_assets.data.formats.native_parquet import footer_verdicts, native_records
from marin_assets.data.spark.parquet_output import write_parquet
from marin_assets.data.formats.readers import list_source_files_and_skipped, relative_name
from marin_assets.data.formats.record_batches import FileCounts, record_batches
from marin_assets.data.formats.record_counts import count_records
from marin_assets.data.spark.side_by_side import Once, run_side_by_side
from marin_assets.data.sources.source_files import estimated_record_bytes
from marin_assets.data.sources.source_registry import SourceFormat, SourceSpec
from marin_assets.data.dedup.spark_dedup import (  # noqa: F401 - lsh_bucket_edges and near_duplicates: public for checks
    EXACT_DUPLICATE, NEAR_DUPLICATE, duplicate_decisions, lsh_bucket_edges, near_duplicates,
)

RECORD_SCHEMA = ("kind string, id string, url string, content string, content_type string, metadata string, "
                 "raw_length long, file string, offset long, reason string, excerpt string")  # fmt: skip
ROW_SCHEMA = ("status string, id string, url string, text string, metadata string, raw_length long, "
              "reason string, value string, file string, offset long, excerpt string, exact_key string, "
              "bands array<long>, step_counts string, quality_score double")  # fmt: skip


def _source_rows(spark, spec: SourceSpec, recipe: CleaningRecipe, files: list[str], eval_index, quality_model,
                 counted=None):  # fmt: skip
    """One source's records as cleaned rows (ROW_SCHEMA + source), computed on the executors.

    counted: a FileCounts accumulator that the read tasks fill with each file's independent count.
    """
    from pyspark.sql import functions as F

    records = read_records(spark, spec, recipe, files, counted)
    partitions = recipe.spark.partitions_for(estimated_record_bytes(files))
    # The id window's shuffle groups records by id. A second one by content sends byte-identical copies
    # to one task, whose worker then cleans each content once (outcome_memo): cheaper than cleaning
    # copies again wherever their ids sent them (18% of the Debian benchmark's text bytes are copies).
    raw = quarantine_duplicate_ids(records, partitions).repartition(partitions, "content")
    curation = curation_job.curation_for(spark, spec.name, recipe, eval_index, quality_model)
    cleaner = RecordCleaner(recipe, spec.name, curation)
    return raw.mapInArrow(cleaner.clean_batches, ROW_SCHEMA).withColumn("source", F.lit(spec.name))


def read_records(spark, spec: SourceSpec, recipe: CleaningRecipe, files: list[str], counted=None):
    """The source's records (RECORD_SCHEMA). Parquet files that Spark's reader reproduces exactly are
    read in the JVM (native_parquet); every other file by its Python reader, one task per file, whose
    records go to the JVM as Arrow batches. Native files are counted apart later (count_source_records)."""
    native = None
    if spec.format == SourceFormat.PARQUET and recipe.spark.native_parquet:
        verdicts = footer_verdicts(spec, files)
        native = native_records(spark, spec, verdicts, recipe.max_record_bytes)
        files = [v.path for v in verdicts if not v.native]
    if not files:
        return native
    paths = spark.createDataFrame(spark.sparkContext.parallelize([(f,) for f in files], len(files)), "path string")
    records = paths.mapInArrow(record_batches(spec, recipe.max_record_bytes, counted), RECORD_SCHEMA)
    return records if native is None else records.unionByName(native)


def clean_source(spark, spec: SourceSpec, recipe: CleaningRecipe, out_dir: str, eval_index: dict | None = None,
                 quality_model: bytes | None = None) -> dict:  # fmt: skip
    """Clean one source into out_dir/{documents,rejected,quarantine}/part-*.parquet; return the stats.

    eval_index (item_hits.EvalIndexes, or a plain {eval set: n-gram hashes} without per-item hits) and
    quality_model (fastText bytes) feed the curation steps.
    """
    return clean_sources(spark, [spec], recipe, {spec.name: out_dir}, eval_index, quality_model)[spec.name]


def clean_sources(spark, specs: list[SourceSpec], recipe: CleaningRecipe, out_dirs: dict[str, str],
                  eval_index: dict | None = None, quality_model: bytes | None = None) -> dict:  # fmt: skip
    """Clean `specs` in one Spark job, dedup by recipe.dedup.scope (within each source, or across all
    of them), and write the sources named in out_dirs; the others only take part in global dedup.

    Each written source's stats hold "reader_counts" (records per file, counted by format apart
    from the readers) so counts_conserve can catch records the reading or cleaning lost.
    """
    from pyspark.sql import functions as F

    listed = {spec.name: list_source_files_and_skipped(spec) for spec in specs}
    for spec in specs:
        if not listed[spec.name][0]:
            raise ValueError(f"source {spec.name!r}: no files match {spec.uri}")
    by_name = {spec.name: spec for spec in specs}
    counted = {name: spark.sparkContext.accumulator({}, FileCounts()) for name in out_dirs}
    parts = [_source_rows(spark, spec, recipe, listed[spec.name][0], eval_index, quality_model, counted.get(spec.name))
             for spec in specs]  # fmt: skip
    rows = reduce(lambda a, b: a.unionByName(b), parts).persist()
    try:
        # The cleaning itself, cached (every later job reads the cache, several side by side), and in the
        # same pass its counts per rule: the writes need those first, and a job of its own after the
        # cleaning would queue behind the other jobs for the cores.
        by_rule = _rule_tallies(rows)
        dedup, precision = recipe.dedup, recipe.dedup_precision
        kept = rows.where(F.col("status") == KEPT)
        # verify_pairs: merge only candidate pairs whose exact Jaccard reaches the threshold
        verify = jaccard_edge_filter(kept, dedup.shingle_size, precision.jaccard_threshold) if (
            dedup.near and precision.verify_pairs) else None
        decisions = duplicate_decisions(kept, dedup.scope, dedup.exact, dedup.near, verify).persist()
        try:
            # The counts per rule and per dedup reason (tallies) size the written files: the writes wait
            # for them, while the other jobs run side by side with them.
            tallies = {name: Once(partial(_tallies, by_rule[name], decisions, name)) for name in out_dirs}
            jobs = {name: _source_jobs(spark, rows, decisions, kept, by_name[name], listed[name], recipe,
                                       out_dir, tallies[name], verify, counted[name].value)
                    for name, out_dir in out_dirs.items()}  # fmt: skip
            done = run_side_by_side(jobs)
            return {name: _source_stats(tallies[name](), done[name], verify) for name in out_dirs}
        finally:
            decisions.unpersist()
    finally:
        rows.unpersist()


def count_source_records(spark, spec: SourceSpec, files: list[str], counted: dict | None = None) -> dict[str, int]:
    """{file relative name: records}: the read tasks' counts (counted), and for any file they did not
    count, one Spark task per file (the file is read a second time). Every listed file has its count."""
    counted = dict(counted or {})
    missing = [f for f in files if relative_name(f, spec) not in counted]

    def count(path: str):
        return relative_name(path, spec), count_records(path, spec)

    if missing:
        counted.update(spark.sparkContext.parallelize(missing, len(missing)).map(count).collect())
    return dict(sorted((relative_name(f, spec), counted[relative_name(f, spec)]) for f in files))


def _rule_tallies(all_rows) -> dict[str, tuple[Counter, Counter]]:
    """{source: (rows per (status, rule), text bytes per status)}: bounded, one row per source and rule."""
    from pyspark.sql import functions as F

    # A quarantine reason's detail after ':' stays out: one row per quarantine code.
    rule = F.when(F.col("status") == QUARANTINED, F.substring_index("reason", ":", 1)).otherwise(F.col("reason"))
    text_bytes = F.coalesce(F.sum(F.octet_length("text")), F.lit(0)).alias("text_bytes")
    grouped = all_rows.groupBy("source", "status", rule.alias("rule")).agg(F.count(F.lit(1)).alias("count"), text_bytes)
    by_source = defaultdict(lambda: (Counter(), Counter()))
    for r in grouped.collect():
        counts, sizes = by_source[r["source"]]
        counts[(r["status"], r["rule"])] = r["count"]
        sizes[r["status"]] += r["text_bytes"]
    return by_source


def _tallies(rule_tallies: tuple[Counter, Counter], decisions, name: str) -> tuple[Counter, Counter, Counter]:
    """(rows per (status, rule), duplicates per dedup reason, text bytes per status) of one source."""
    from pyspark.sql import functions as F

    dropped = decisions.where(F.col("source") == name)
    dup_counts = Counter({r["dup_reason"]: r["count"] for r in dropped.groupBy("dup_reason").count().collect()})
    counts, sizes = rule_tallies
    return counts, dup_counts, sizes


def _source_jobs(spark, all_rows, decisions, kept, spec: SourceSpec, listed: tuple, recipe: CleaningRecipe,
                 out_dir: str, tallies: Once, verify, counted: dict) -> dict:  # fmt: skip
    """{part of the stats: a function running its Spark job(s)} for one written source; independent
    (the writes ask `tallies` for the counts that size their files)."""
    from pyspark.sql import functions as F

    name, (files, skipped) = spec.name, listed
    rows = all_rows.where(F.col("source") == name)
    jobs = {**_write_jobs(all_rows, decisions, name, recipe, out_dir, tallies),
            "file_level": lambda: file_level(rows, [relative_name(f, spec) for f in skipped]),
            "step_stats": lambda: curation_job.step_stats(rows),
            "reader_counts": lambda: count_source_records(spark, spec, files, counted)}  # fmt: skip
    if recipe.dedup.near:  # a bounded sample of the LSH candidate pairs, for the dedup_precision check
        pairs = candidate_pair_sample(kept.where(F.col("source") == name), recipe.dedup_precision.sample_pairs,
                                      recipe.dedup.seed)  # fmt: skip
        jobs["dedup_pairs_sampled"] = lambda: write_parquet(pairs, PAIR_SCHEMA, posixpath.join(out_dir, PAIRS_TABLE),
                                                            1, "id_a", ["id_a", "id_b"])  # fmt: skip
    return jobs


def _write_jobs(all_rows, decisions, name: str, recipe: CleaningRecipe, out_dir: str, tallies: Once) -> dict:
    from pyspark.sql import functions as F

    rows = all_rows.where(F.col("source") == name)
    dropped = decisions.where(F.col("source") == name).drop("source")
    all_kept = rows.where(F.col("status") == KEPT)
    doc_cols = ["id", "source", "url", "text", "metadata", "raw_length", "quality_score"]
    no_kept = [F.lit(None).cast("string").alias("kept_id"), F.lit(None).cast("string").alias("kept_source")]
    final_kept = all_kept.join(dropped, "id", "left_anti").select(*doc_cols)
    # what users see for a duplicate: the document kept in its place
    why = F.when(F.col("dup_reason") == EXACT_DUPLICATE, "same text as ").otherwise("near duplicate of ")
    dup_value = F.concat(why, F.col("kept_id"), F.lit(" ("), F.col("kept_source"), F.lit(")"))
    dup_rows = all_kept.join(dropped, "id").select(*doc_cols, F.col("dup_reason").alias("reason"), "kept_id",
                                                   "kept_source", dup_value.alias("value"))  # fmt: skip
    rejected_rows = rows.where(F.col("status") == REJECTED).select(*doc_cols, "reason", *no_kept, "value")
    rejected_rows = rejected_rows.unionByName(dup_rows)
    rejected = rejected_rows.drop("value")
    quarantined = rows.where(F.col("status") == QUARANTINED).select("source", "file", "offset", "reason", "excerpt")

    def files(table: str) -> int:
        """The documents' or the rejected table's file count, from the tallies."""
        counts, dup_counts, sizes = tallies()
        n_kept = sum(c for (status, _), c in counts.items() if status == KEPT)
        n_duplicates = sum(dup_counts.values())
        n_rejected = sum(c for (status, _), c in counts.items() if status == REJECTED) + n_duplicates
        # a duplicate moves from the kept texts to the rejected ones: an estimate of its bytes (a function of the tallies)
        dup_bytes = sizes[KEPT] * n_duplicates // max(n_kept, 1)
        if table == "documents":
            return recipe.spark.files_for(n_kept - n_duplicates, sizes[KEPT] - dup_bytes)
        return recipe.spark.files_for(n_rejected, sizes[REJECTED] + dup_bytes)

    def table(name: str) -> str:
        return posixpath.join(out_dir, name)

    return {
        "documents": lambda: write_parquet(final_kept, DOCUMENT_SCHEMA, table("documents"), files("documents"), "id",
                                           ["id", "text"]),
        "rejected": lambda: write_parquet(rejected, REJECTED_SCHEMA, table("rejected"), files("rejected"), "id",
                                          ["id", "reason", "text"]),
        "quarantine": lambda: write_parquet(quarantined, QUARANTINE_SCHEMA, table("quarantine"), 1, "file",
                                            ["file", "offset"]),
        "rejected_examples": lambda: rejected_examples(rejected_rows),
    }  # fmt: skip


def _source_stats(tallies: tuple[Counter, Counter, Counter], done: dict, verify=None) -> dict:
    """One source's stats from its tallies and the results of its jobs (same keys, same order as ever)."""
    stats = {**_stats(*tallies[:2], done), "rejected_examples": done["rejected_examples"], **done["file_level"],
             **done["step_stats"]}  # fmt: skip
    if "dedup_pairs_sampled" in done:
        stats["dedup_pairs_sampled"] = done["dedup_pairs_sampled"]
    if verify is not None:  # filled while the decisions were computed (its counts ran then)
        stats["near_dedup_verification"] = verify.cost
    counts = done["reader_counts"]
    counted = sum(counts.values())
    return {**stats, "records_counted": counted, "reader_counts": counts,
            "conserved": stats["conserved"] and counted == stats["records_in"]}


def _stats(counts: Counter, dup_counts: Counter, written: dict) -> dict:
    rejected_by_rule = Counter({reason: c for (status, reason), c in counts.items() if status == REJECTED})
    rejected_by_rule.update(dup_counts)
    quarantined_by_code = Counter()
    for (status, reason), c in counts.items():
        if status == QUARANTINED:
            quarantined_by_code[reason.split(":", 1)[0]] += c
    ignored_by_reason = Counter({reason: c for (status, reason), c in counts.items() if status == IGNORED})
    stats = {
        "records_in": sum(counts.values()),
        "kept": written["documents"],
        "rejected": written["rejected"],
        "quarantined": written["quarantine"],
        "ignored": sum(ignored_by_reason.values()),  # e.g. blank JSONL lines: no record, in no table
        "rejected_by_rule": dict(sorted(rejected_by_rule.items())),
        "quarantined_by_reason": dict(sorted(quarantined_by_code.items())),
        "ignored_by_reason": dict(sorted(ignored_by_reason.items())),
    }
    stats["conserved"] = stats["records_in"] == (stats["kept"] + stats["rejected"] + stats["quarantined"]
                                                 + stats["ignored"])
    return stats
