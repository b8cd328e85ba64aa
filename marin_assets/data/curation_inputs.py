"""What the curation steps read from storage: every eval set's n-gram index and the quality model.

A step the recipe switches on must find its input committed; a missing one is an error naming the
asset to materialize, never a silently skipped step.
"""

from __future__ import annotations

import numpy as np

from marin_assets.core import layout
from marin_assets.core.storage import Storage, StorageError
from marin_assets.data.cleaning_recipe import CleaningRecipe
from marin_assets.data.eval_index import read_index, read_summary
from marin_assets.data.eval_sets import load_eval_sets

MODEL_NAME = "model.bin"


def eval_indexes(store: Storage, recipe: CleaningRecipe) -> dict[str, np.ndarray] | None:
    if not recipe.decontamination.enabled:
        return None
    out = {}
    for name in load_eval_sets().names:
        if not store.is_committed(layout.EVAL, name):
            raise StorageError(f"decontamination is on but eval_set[{name}] is not materialized; materialize it first")
        ngram = read_summary(store, name)["ngram"]
        if ngram != recipe.decontamination.ngram:
            raise StorageError(f"eval_set[{name}] was indexed with {ngram}-grams, the recipe asks for "
                               f"{recipe.decontamination.ngram}: rematerialize eval_set")  # fmt: skip
        out[name] = read_index(store, name)
    return out


def quality_model(store: Storage, recipe: CleaningRecipe) -> bytes | None:
    if not (recipe.quality.score or recipe.quality.filter):
        return None
    if not store.is_committed(layout.QUALITY):
        raise StorageError("quality scoring is on but quality_classifier is not materialized; materialize it first")
    with store.fs.open(store.committed_uri(layout.QUALITY, MODEL_NAME), "rb") as f:
        return f.read()
