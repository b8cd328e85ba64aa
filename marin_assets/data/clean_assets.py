"""Cleaned tables in Dagster: one partition per source, the Spark cleaning job, and its count check.

cleaned_documents[source] writes cleaned/<source>/{documents,rejected,quarantine}/part-*.parquet and
stats.json (per-rule counts). It refuses a source whose raw inventory is not cleared for use.
"""

import dagster as dg
import pyarrow.parquet as pq

from marin_assets.core import layout
from marin_assets.core.hashing import code_version
from marin_assets.data import cleaning_job, cleaning_rows, dedup, normalize, parquet_output
from marin_assets.data import curation, curation_inputs, curation_job, decontaminate, dedup_precision, pii, quality_classifier
from marin_assets.data.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.clean_source_gate import require_cleared
from marin_assets.data.filters import c4, fineweb, gopher_quality, gopher_repetition, text
from marin_assets.data.partitions import SOURCE_PARTITIONS
from marin_assets.data.raw_assets import raw_corpus
from marin_assets.data.sources import load_sources
from marin_assets.governance.recording import record_output
from marin_assets.resources.spark import SparkResource
from marin_assets.resources.spark_progress import spark_progress
from marin_assets.resources.storage import StorageResource

STATS_NAME = "stats.json"
TABLES = ("documents", "rejected", "quarantine")
CODE_VERSION = code_version(
    load_cleaning_recipe().model_dump(mode="json"),
    cleaning_job, cleaning_rows, parquet_output, dedup, normalize, text, gopher_repetition, gopher_quality, c4, fineweb,
    curation, curation_job, curation_inputs, decontaminate, dedup_precision, pii, quality_classifier,
)  # fmt: skip


@dg.asset(
    partitions_def=SOURCE_PARTITIONS,
    group_name="data",
    code_version=CODE_VERSION,
    kinds={"spark", "parquet"},
    deps=[
        dg.AssetDep(raw_corpus, partition_mapping=dg.IdentityPartitionMapping()),
        dg.AssetDep("eval_set", partition_mapping=dg.AllPartitionMapping()),  # every eval set, for decontamination
        dg.AssetDep("quality_classifier"),  # scores every document
    ],
    description="Spark-cleaned documents of one source, plus rejected (with rule) and quarantined records.",
)
def cleaned_documents(
    context: dg.AssetExecutionContext, storage: StorageResource, spark: SparkResource
) -> dg.MaterializeResult:
    source = context.partition_key
    store = storage.storage
    require_cleared(store, source)
    spec = load_sources().get(source)
    recipe = load_cleaning_recipe()
    session = spark.get_session()
    with store.atomic_dir(layout.CLEANED, source) as staged:
        with spark_progress(session, context.log):  # stage progress in the run log while Spark works
            stats = cleaning_job.clean_source(session, spec, recipe, staged.path,
                                              curation_inputs.eval_indexes(store, recipe),
                                              curation_inputs.quality_model(store, recipe))  # fmt: skip
        staged.write_json(stats, STATS_NAME)
        context.log.info(f"{source}: {stats['kept']} kept, {stats['rejected']} rejected, "
                         f"{stats['quarantined']} quarantined of {stats['records_in']}")  # fmt: skip
        per_rule = {f"rejected[{rule}]": n for rule, n in stats["rejected_by_rule"].items()}
        per_code = {f"quarantined[{code}]": n for code, n in stats["quarantined_by_reason"].items()}
        return record_output(
            context,
            staged,
            recipe=recipe,
            code_version=CODE_VERSION,
            stats=stats,
            extra_metadata={**per_rule, **per_code, "rejected_by_rule": dg.MetadataValue.json(stats["rejected_by_rule"]),
                            **curation_metadata(stats)},
            sources=[source],
        )


def curation_metadata(stats: dict) -> dict:
    """Counts of the curation steps (decontamination per eval set, PII per kind) with example ids."""
    counts = stats.get("curation_counts", {})
    return {**{f"curation[{key}]": n for key, n in counts.items()},
            "curation_examples": dg.MetadataValue.json(stats.get("curation_examples", {}))}  # fmt: skip


def table_rows(storage: StorageResource, source: str, table: str) -> int:
    files = [f for f in storage.storage.list_files(layout.CLEANED, source) if f.startswith(f"{table}/")]
    fs = storage.storage.fs
    total = 0
    for rel in files:
        with fs.open(storage.storage.uri(layout.CLEANED, source, rel), "rb") as f:
            total += pq.ParquetFile(f).metadata.num_rows
    return total


@dg.asset_check(
    asset=cleaned_documents,
    name="counts_conserve",
    blocking=True,
    partitions_def=SOURCE_PARTITIONS,
    description="Every record read is accounted for: in = kept + rejected + quarantined (rows in the Parquet files).",
)
def counts_conserve(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
    source = context.partition_key
    storage.storage.require_committed(layout.CLEANED, source)
    stats = storage.storage.read_json(layout.CLEANED, source, STATS_NAME)
    rows = {table: table_rows(storage, source, table) for table in TABLES}
    accounted = sum(rows.values())
    return dg.AssetCheckResult(
        passed=accounted == stats["records_in"],
        metadata={"records_in": stats["records_in"], **{f"rows_{t}": n for t, n in rows.items()}, "accounted": accounted},
    )


CLEAN_ASSETS = [cleaned_documents]
CLEAN_CHECKS = [counts_conserve]
