"""The quality classifier in Dagster: quality_classifier trains fastText on the recipe's reference sources.

Its data version is the model file's sha256 (training is seeded on one thread, so reruns give the
same bytes); cleaned_documents scores every document with it.
"""

import dagster as dg

from marin_assets.core import layout
from marin_assets.lineage.code_versions import versioned
from marin_assets.core.hashing import sha256_bytes
from marin_assets.data.curate import quality_classifier as qc
from marin_assets.data.extract import reference_texts
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.sources.compliance import require_sources_cleared
from marin_assets.data.curate.curation_inputs import MODEL_NAME
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.core.metadata_tables import counts_table, metadata_table
from marin_assets.lineage.recording import record_output
from marin_assets.resources.storage_resource import StorageResource

METRICS_NAME = "metrics.json"


def build_quality_assets(recipe: qc.QualityClassifierRecipe) -> list:
    """quality_classifier, versioned by its recipe."""
    return [versioned(recipe.model_dump(mode="json"))(dg.asset(
        group_name="data",
        kinds={"python"},
        deps=["raw_corpus"],
        description="DCLM-style fastText quality classifier from recipe-declared positive / negative sources.",
    )(quality_classifier))]


def quality_classifier(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    recipe = qc.load_quality_classifier_recipe()
    registry, cleaning = load_sources(), load_cleaning_recipe()
    # It trains on the raw reference sources: the same refusal as every other consumer of a source.
    require_sources_cleared(storage.storage, "quality_classifier", [*recipe.positive_sources, *recipe.negative_sources],
                            registry)
    skipped: dict[str, int] = {}

    def docs(names: list[str], label: str):
        for name in names:
            for doc_id, text in reference_texts.source_texts(registry.get(name), cleaning.max_record_bytes,
                                                             cleaning.normalize.form, skipped):  # fmt: skip
                yield f"{name}/{doc_id}", text, label

    examples = qc.split_examples(
        [*docs(recipe.positive_sources, qc.POSITIVE), *docs(recipe.negative_sources, qc.NEGATIVE)], recipe
    )
    model_bytes = qc.train(examples, recipe)
    model = qc.load_model(model_bytes)
    metrics = qc.evaluate(model, examples.held_out)
    features = qc.top_features(model)
    digest = sha256_bytes(model_bytes)
    with storage.storage.atomic_dir(layout.QUALITY) as staged:
        with staged.storage.fs.open(staged.join(MODEL_NAME), "wb") as f:
            f.write(model_bytes)
        summary = {**metrics, "model_sha256": digest, "label_counts": examples.label_counts, "train": len(examples.train),
                   "skipped_records": skipped, "top_features": features}  # fmt: skip
        staged.write_json(summary, METRICS_NAME)
        context.log.info(f"quality_classifier: held-out accuracy {metrics['accuracy']:.3f} on {metrics['held_out']}")
        return record_output(
            context,
            staged,
            recipe=recipe,
            stats={**metrics, "train": len(examples.train), "model_bytes": len(model_bytes)},
            output_hash=digest,
            extra_metadata={
                "label_counts": counts_table(examples.label_counts, key="label"),
                "top_features": metadata_table(
                    [{"pushes_towards": side, "word": word, "weight": weight}
                     for side, pairs in features.items() for word, weight in pairs],
                    columns=["pushes_towards", "word", "weight"]),
                "model_sha256": digest,
            },
            sources=[*recipe.positive_sources, *recipe.negative_sources],
        )

