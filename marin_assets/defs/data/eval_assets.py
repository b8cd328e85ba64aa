"""Eval sets in Dagster: eval_set[name] = normalised items + hashed 13-gram index + raw text, once per version.

Partitioned by eval set (recipes/eval_sets.yaml); cleaned_documents depends on every partition, so a
changed eval set makes every source's cleaned table stale, and the index is never rebuilt per source.
"""

import dagster as dg

from marin_assets.core import layout
from marin_assets.lineage.code_versions import versioned
from marin_assets.data.curate import eval_index
from marin_assets.data.clean.cleaning_recipe import CleaningRecipe, load_cleaning_recipe
from marin_assets.data.curate.eval_sets import file_checksum, load_eval_sets
from marin_assets.lineage.recording import record_output
from marin_assets.resources.storage_resource import StorageResource


def build_eval_assets(partitions: dg.PartitionsDefinition, recipe: CleaningRecipe) -> list:
    """eval_set over the registered eval sets, versioned by the decontamination n-gram size."""
    return [versioned(recipe.decontamination.ngram)(dg.asset(
        partitions_def=partitions,
        group_name="data",
        kinds={"python", "parquet"},
        description="One registered eval set: normalised items and the hashed n-gram index decontamination uses, and "
                    "its raw text, on which every training and scaling run reports loss and bits per byte.",
    )(eval_set))]


def eval_set(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    spec = load_eval_sets().get(context.partition_key)
    checksum = file_checksum(spec)
    if spec.provenance.checksum and checksum != spec.provenance.checksum:
        raise ValueError(f"eval set {spec.name}: {spec.uri} does not match provenance.checksum "
                         f"({checksum} != {spec.provenance.checksum}); rebuild it or update the registry")  # fmt: skip
    ngram = load_cleaning_recipe().decontamination.ngram
    with storage.storage.atomic_dir(layout.EVAL, spec.name) as staged:
        summary = eval_index.build(spec, ngram, staged.path)
        staged.write_json({**summary, "checksum": checksum, "license": spec.license}, eval_index.SUMMARY)
        context.log.info(f"eval set {spec.name}: {summary['items']} items, {summary['ngrams']} {ngram}-grams")
        return record_output(
            context,
            staged,
            recipe=spec,
            stats={k: summary[k] for k in ("items", "ngrams", "ngram")},
            extra_metadata={"license": spec.license, "items_too_short": dg.MetadataValue.json(summary["items_too_short"])},
            sources=[],
        )

