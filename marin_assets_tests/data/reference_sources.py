"""Ingest the quality classifier's reference sources (raw_corpus) into a test store first: the classifier,
like every consumer of a source, refuses sources whose raw_corpus inventory is not committed and cleared."""

from __future__ import annotations

import dagster as dg

from marin_assets.data.curate.quality_classifier import load_quality_classifier_recipe
from marin_assets_tests.stage_definitions import raw_corpus
from marin_assets.resources.storage_resource import StorageResource


def ingest_reference_sources(store_root, instance: dg.DagsterInstance | None = None) -> None:
    recipe = load_quality_classifier_recipe()
    for source in sorted({*recipe.positive_sources, *recipe.negative_sources}):
        result = dg.materialize([raw_corpus], resources={"storage": StorageResource(root_uri=str(store_root))},
                                partition_key=source, instance=instance or dg.DagsterInstance.ephemeral())
        assert result.success, f"raw_corpus[{source}] did not materialize"
