"""dedup_precision: is near dedup removing real near duplicates? (an asset check on cleaned_documents)

The cleaning job writes a bounded sample of the run's LSH candidate pairs (dedup_pairs/, with both
texts); this check computes their exact Jaccard similarity and fails when the share at or above the
recipe threshold is below the recipe minimum. Marin measured a 63.6% false-positive rate in plain
MinHash at scale: the check makes that number visible per source and per run.
"""

import dagster as dg
import pyarrow.parquet as pq

from marin_assets.core import layout
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.dedup.dedup_precision import PAIRS_TABLE, precision_report
from marin_assets.resources.storage_resource import StorageResource


def read_pairs(storage: StorageResource, source: str) -> list[dict]:
    store = storage.storage
    rows = []
    for rel in store.list_files(layout.CLEANED, source):
        if rel.startswith(f"{PAIRS_TABLE}/"):
            with store.fs.open(store.committed_uri(layout.CLEANED, source, rel), "rb") as f:
                rows.extend(pq.read_table(f).to_pylist())
    return rows


def build_dedup_checks(partitions: dg.PartitionsDefinition) -> list:
    """dedup_precision on cleaned_documents, per source."""
    return [dg.asset_check(
        asset="cleaned_documents",
        name="dedup_precision",
        partitions_def=partitions,
        description="Exact Jaccard of sampled LSH candidate pairs: share >= recipe threshold must reach the recipe "
                    "minimum.",
    )(dedup_precision)]


def dedup_precision(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
    source = context.partition_key
    storage.storage.require_committed(layout.CLEANED, source)
    recipe = load_cleaning_recipe()
    cfg = recipe.dedup_precision
    report = precision_report(read_pairs(storage, source), recipe.dedup.shingle_size, cfg.jaccard_threshold,
                              cfg.worst_pairs)  # fmt: skip
    passed = report.precision is None or report.precision >= cfg.min_precision
    return dg.AssetCheckResult(
        passed=passed,
        severity=dg.AssetCheckSeverity.ERROR,
        description=(
            "no LSH candidate pairs in this run" if report.precision is None
            else f"precision {report.precision:.3f} over {report.pairs} sampled pairs (minimum {cfg.min_precision})"
        ),  # fmt: skip
        metadata={
            "pairs_sampled": report.pairs,
            "true_pairs": report.true_pairs,
            "precision": dg.MetadataValue.float(report.precision if report.precision is not None else float("nan")),
            "mean_jaccard": dg.MetadataValue.float(report.mean_jaccard if report.mean_jaccard is not None else float("nan")),
            "jaccard_threshold": cfg.jaccard_threshold,
            "min_precision": cfg.min_precision,
            "bands_x_rows": f"{recipe.dedup.bands}x{recipe.dedup.rows}",
            "worst_pairs": dg.MetadataValue.json(report.worst),
        },
    )

