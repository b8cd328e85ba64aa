"""Cleaned tables in Dagster: one partition per source, the Spark cleaning job, and its count check.

cleaned_documents[source] writes cleaned/<source>/{documents,rejected,quarantine}/part-*.parquet and
stats.json (per-rule counts). It refuses a source whose raw inventory is not cleared for use.
Where the Spark job runs is the `cleaning_runner` resource's backend (resources/cleaning_runners.py:
this process's session, or Dataproc); the folder is the same either way (data/cleaned_output.py).

With dedup scope `global` a partition's result depends on every cleared source: the partition then
depends on all raw_corpus partitions (so a new or changed source makes every partition stale) and
its Spark job cleans the peers too, dedups across all of them, and writes only its own source. The
answer is the same whichever partitions run and in whichever order, at the price of cleaning the
peers again per partition (a single-run backfill writing every partition would share that work).
"""

import dagster as dg
import pyarrow.parquet as pq
import pandas as pd

from marin_assets.core import layout
from marin_assets.lineage.code_versions import versioned
from marin_assets.data.clean import file_errors
from marin_assets.data.clean.cleaned_output import READER_COUNTS_NAME, STATS_NAME, TABLES, planned_job, read_cleaned
from marin_assets.data.clean.cleaning_recipe import CleaningRecipe, load_cleaning_recipe
from marin_assets.data.clean.clean_source_gate import dedup_peers
from marin_assets.data.sources.compliance import require_sources_cleared
from marin_assets.data.curate.decontamination_step import hits_per_item, item_key
from marin_assets.data.curate.eval_sets import load_eval_sets
from marin_assets.data.formats.record_counts import conservation
from marin_assets.data.report.data_report import rule_rows
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.resources.cleaning_runners import CleaningRunnerResource
from marin_assets.core.metadata_tables import metadata_table
from marin_assets.lineage.recording import record_output
from marin_assets.resources.storage_resource import StorageResource

EXAMPLE_COLUMNS = ("rule", "id", "url", "excerpt", "value")


def build_clean_assets(partitions: dg.PartitionsDefinition, recipe: CleaningRecipe) -> tuple[list, list]:
    """(cleaned_documents, its counts_conserve check), versioned by the whole cleaning recipe."""
    # scope global: every source's raw corpus feeds every partition's dedup
    raw_mapping = {"source": dg.IdentityPartitionMapping(), "global": dg.AllPartitionMapping()}[recipe.dedup.scope]
    asset = versioned(recipe.model_dump(mode="json"))(dg.asset(
        partitions_def=partitions,
        group_name="data",
        kinds={"spark", "parquet"},
        deps=[
            dg.AssetDep("raw_corpus", partition_mapping=raw_mapping),
            dg.AssetDep("eval_set", partition_mapping=dg.AllPartitionMapping()),  # every eval set, for decontamination
            dg.AssetDep("task_set_decontamination"),  # every task set's items (evaluation stage, by key), likewise
            dg.AssetDep("quality_classifier"),  # scores every document
        ],
        description="Spark-cleaned documents of one source, plus rejected (with rule) and quarantined records.",
    )(cleaned_documents))
    check = dg.asset_check(
        asset=asset,
        name="counts_conserve",
        blocking=True,
        partitions_def=partitions,
        description="Every record in the raw files is accounted for: records counted per file by format, apart "
                    "from the readers and the cleaner = kept + rejected + quarantined (rows in the Parquet files) "
                    "+ ignored (blank lines, from stats.json).",
    )(counts_conserve)
    return [asset], [check]


def cleaned_documents(
    context: dg.AssetExecutionContext, storage: StorageResource, cleaning_runner: CleaningRunnerResource
) -> dg.MaterializeResult:
    source = context.partition_key
    store = storage.storage
    require_sources_cleared(store, f"cleaned_documents[{source}]", [source])
    # Read once here: the job carries these values to the driver and its workers (cleaning_values.py).
    recipe, sources = load_cleaning_recipe(), load_sources()
    peers = dedup_peers(store, source, recipe.dedup.scope, sources.names)
    with store.atomic_dir(layout.CLEANED, source) as staged:
        job = planned_job(store, source, peers, staged.path, recipe, sources, load_eval_sets().names)
        # the backend (this session, Dataproc, ...) fills the staging folder; the metadata comes from it
        run_metadata = cleaning_runner.runner().run(context, job)
        folder = read_cleaned(staged.path)
        stats = folder.stats
        context.log.info(f"{source}: {stats['kept']} kept, {stats['rejected']} rejected, "
                         f"{stats['quarantined']} quarantined of {stats['records_in']}")  # fmt: skip
        per_code = {f"quarantined[{code}]": n for code, n in stats["quarantined_by_reason"].items()}
        repaired = {f"repaired[{reason}]": n for reason, n in stats["repaired_by_reason"].items()}
        for row in stats["file_errors"]:
            context.log.warning(file_errors.warning_line(source, row))
        return record_output(
            context,
            staged,
            recipe=recipe,
            stats=stats,
            extra_metadata={"rejected_by_rule": metadata_table(rule_rows(stats)), **per_code, **repaired,
                            "file_errors": _file_errors_table(stats["file_errors"]),
                            "rejected_examples": rejected_examples_table(folder.examples),
                            **curation_metadata(stats), **run_metadata},  # fmt: skip
            sources=[source],
        )


SHOWN_CHARS = {"excerpt": 80, "url": 60, "value": 40}  # the UI's columns stay readable; the Parquet keeps all


def _shown(value, column: str) -> str:
    text = "" if value is None else " ".join(str(value).split())
    limit = SHOWN_CHARS.get(column)
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


def rejected_examples_table(examples: list[dict]) -> dg.TableMetadataValue:
    """Per rule, a few rejected documents and the value that tripped the rule, for judging the rule."""
    schema = dg.TableSchema(columns=[dg.TableColumn(name, "string") for name in EXAMPLE_COLUMNS])
    records = [dg.TableRecord({name: _shown(row[name], name) for name in EXAMPLE_COLUMNS}) for row in examples]
    return dg.MetadataValue.table(records, schema=schema)


def _file_errors_table(rows: list[dict]) -> dg.MetadataValue:
    schema = dg.TableSchema(columns=[
        dg.TableColumn("file", "string"), dg.TableColumn("reason", "string"), dg.TableColumn("offset", "int"),
        dg.TableColumn("lost_bytes", "int"), dg.TableColumn("lost_records", "int"),
    ])  # fmt: skip
    return dg.MetadataValue.table([dg.TableRecord(row) for row in rows], schema=schema)


def curation_metadata(stats: dict) -> dict:
    """Counts of the curation steps (decontamination per eval set, PII per kind) with example ids."""
    counts, examples = stats.get("curation_counts", {}), stats.get("curation_examples", {})
    items = hits_per_item(counts, examples)  # one row per eval item found, not one metadata entry each
    item_keys = {item_key(r["eval_set"], r["item"]) for r in items}
    return {**{f"curation[{key}]": n for key, n in counts.items() if key not in item_keys},
            "curation_examples": dg.MetadataValue.json({k: v for k, v in examples.items() if k not in item_keys}),
            "decontamination_items": dg.MetadataValue.md(
                pd.DataFrame(items).to_markdown(index=False) if items else "no eval item found in any document")}


def table_rows(storage: StorageResource, source: str, table: str) -> int:
    files = [f for f in storage.storage.list_files(layout.CLEANED, source) if f.startswith(f"{table}/")]
    fs = storage.storage.fs
    total = 0
    for rel in files:
        with fs.open(storage.storage.committed_uri(layout.CLEANED, source, rel), "rb") as f:
            total += pq.ParquetFile(f).metadata.num_rows
    return total


def counts_conserve(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
    source = context.partition_key
    st = storage.storage
    st.require_committed(layout.CLEANED, source)
    stats = st.read_json(layout.CLEANED, source, STATS_NAME)
    rows = {table: table_rows(storage, source, table) for table in TABLES}
    rows["ignored"] = stats.get("ignored", 0)  # blank lines: counted by the cleaner, written to no table
    counted = None
    if st.exists(layout.CLEANED, source, READER_COUNTS_NAME):
        per_file = st.read_json(layout.CLEANED, source, READER_COUNTS_NAME)
        counted = sum(per_file.values())
    verdict = conservation(counted, stats["records_in"], rows)
    return dg.AssetCheckResult(
        passed=verdict.passed,
        description=verdict.message,
        metadata={"records_counted": counted if counted is not None else "missing",
                  "records_in_cleaner": stats["records_in"], **{f"rows_{t}": n for t, n in rows.items()},
                  "accounted": sum(rows.values())},
    )

