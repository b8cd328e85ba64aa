"""data_report[source]: the cleaning funnel, histograms, rejections, duplicates, PII and decontamination.

Written as reports/<source>/{report.md, report.json, funnel.png, lengths.png, languages.png} and shown in
the Dagster UI as Markdown with the PNGs inline (base64), so the UI and the files say the same.
"""

import base64

import dagster as dg
import pyarrow.parquet as pq

from marin_assets.core import layout
from marin_assets.lineage.code_versions import versioned
from marin_assets.data.report import data_report as report, report_plots
from marin_assets.data.clean.cleaning_recipe import CleaningRecipe, load_cleaning_recipe
from marin_assets.core.metadata_tables import counts_table, metadata_table
from marin_assets.lineage.recording import record_output
from marin_assets.resources.storage_resource import StorageResource

COLUMNS = {"documents": ["id", "text", "metadata", "quality_score"], "rejected": ["id", "text", "metadata", "reason"]}


def _rows(storage: StorageResource, source: str, table: str) -> list[dict]:
    store, rows = storage.storage, []
    for rel in store.list_files(layout.CLEANED, source):
        if rel.startswith(f"{table}/"):
            with store.fs.open(store.committed_uri(layout.CLEANED, source, rel), "rb") as f:
                parquet = pq.ParquetFile(f)
                rows.extend(parquet.read(columns=[c for c in COLUMNS[table] if c in parquet.schema_arrow.names]).to_pylist())
    return rows


def length_rows(histogram: dict[str, list[dict]]) -> list[dict]:
    """One row per shared length bin: kept and rejected side by side."""
    kept, rejected = histogram["kept"], histogram["rejected"]
    bins = kept or rejected
    return [{"from_chars": b["from"], "to_chars": b["to"], "kept": kept[i]["documents"] if kept else 0,
             "rejected": rejected[i]["documents"] if rejected else 0} for i, b in enumerate(bins)]


def build_report_assets(partitions: dg.PartitionsDefinition, recipe: CleaningRecipe) -> list:
    """data_report per source, versioned by the dedup section it reports duplicates with."""
    return [versioned(recipe.dedup.model_dump(mode="json"))(dg.asset(
        partitions_def=partitions,
        group_name="data",
        kinds={"python"},
        deps=[dg.AssetDep("cleaned_documents", partition_mapping=dg.IdentityPartitionMapping())],
        description="Per-source data report: funnel plot, length / language histograms, rejections, duplicates, PII.",
    )(data_report))]


def data_report(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    source, store = context.partition_key, storage.storage
    store.require_committed(layout.CLEANED, source)
    stats = store.read_json(layout.CLEANED, source, "stats.json")
    built = report.build_report(source, stats, _rows(storage, source, "documents"), _rows(storage, source, "rejected"),
                                load_cleaning_recipe().dedup)  # fmt: skip
    images = {name: draw(built) for name, draw in report_plots.FIGURES.items()}
    with store.atomic_dir(layout.REPORTS, source) as staged:
        for name, png in images.items():
            with store.fs.open(staged.join(f"{name}.png"), "wb") as f:
                f.write(png)
        with store.fs.open(staged.join("report.md"), "w") as f:
            f.write(report.markdown(built, {name: f"{name}.png" for name in images}))
        staged.write_json(built, "report.json")
        inline = {name: "data:image/png;base64," + base64.b64encode(png).decode() for name, png in images.items()}
        return record_output(
            context,
            staged,
            recipe=load_cleaning_recipe().dedup,
            stats={**{k: built[k] for k in ("records_in", "kept", "rejected", "quarantined")},
                   "kept_share": round(built["kept"] / built["records_in"], 3) if built["records_in"] else 0.0},
            # the headline numbers (stats), then a plot legible where it is shown (text bars, inline),
            # the tables, and the full report with its figures one click down
            extra_metadata={
                "funnel_plot": dg.MetadataValue.md(report.funnel_bars(built)),
                "funnel": metadata_table(built["funnel"], columns=["stage", "removed", "remaining"]),
                "lengths": metadata_table(length_rows(built["length_histogram"]),
                                          columns=["from_chars", "to_chars", "kept", "rejected"]),
                "pii": counts_table(built["pii"], key="kind"),
                "decontamination": counts_table(built["decontamination"], key="eval_set_count"),
                "duplicate_cluster_sizes": metadata_table(
                    [{"cluster_size": int(k), "clusters": v}
                     for k, v in (built["duplicate_cluster_sizes"] or {}).items()],
                    columns=["cluster_size", "clusters"]),
                "report": dg.MetadataValue.md(report.markdown(built, inline)),
                "report_markdown": dg.MetadataValue.path(f"{staged.final_uri}/report.md"),
            },
            previews=False,  # a 1-bit thumbnail of the funnel says less than funnel_plot
        )

