"""What the curation steps read from storage: every eval set's and task set's index and items, and the quality model.

A step the recipe switches on must find its input committed; a missing one is an error naming the
asset to materialize, never a silently skipped step.
"""

from __future__ import annotations

from marin_assets.core import layout
from marin_assets.core.storage import Storage, StorageError
from marin_assets.data.clean.cleaning_recipe import CleaningRecipe
from marin_assets.data.curate.eval_index import ITEMS, read_index, read_summary
from marin_assets.data.curate.item_hits import EvalIndexes, ItemIndex, build_item_index
from marin_assets.data.curate.task_set_indexes import read_task_set_indexes

MODEL_NAME = "model.bin"


def read_item_index(store: Storage, name: str, ngram: int) -> ItemIndex:
    """One committed eval set's items as an item index at `ngram` (items shorter than it left out, as the
    hashed index leaves them out): which item holds each n-gram, for decontamination's per-item report."""
    import pyarrow.parquet as pq

    with store.fs.open(store.committed_uri(layout.EVAL, name, ITEMS), "rb") as f:
        table = pq.read_table(f, columns=["id", "text"]).to_pydict()  # the normalised words, space-joined
    rows = ((name, item_id, "text", text) for item_id, text in zip(table["id"], table["text"]))
    return build_item_index(rows, ngram, short_items=False)


def eval_indexes(store: Storage, recipe: CleaningRecipe, eval_sets: list[str]) -> EvalIndexes | None:
    """The indexes of `eval_sets` (the registered ones, as the job's values name them) if decontamination is on."""
    if not recipe.decontamination.enabled:
        return None
    out, items = {}, {}
    for name in eval_sets:
        if not store.is_committed(layout.EVAL, name):
            raise StorageError(f"decontamination is on but eval_set[{name}] is not materialized; materialize it first")
        ngram = read_summary(store, name)["ngram"]
        if ngram != recipe.decontamination.ngram:
            raise StorageError(f"eval_set[{name}] was indexed with {ngram}-grams, the recipe asks for "
                               f"{recipe.decontamination.ngram}: rematerialize eval_set")  # fmt: skip
        out[name] = read_index(store, name)
        items[name] = read_item_index(store, name, ngram)
    # every registered task set too, unless it opted out (evaluation's task_set_decontamination)
    task_hashes, task_items, _ = read_task_set_indexes(store, recipe.decontamination.ngram,
                                                       recipe.decontamination.min_item_words)
    if clash := sorted(set(task_hashes) & set(out)):
        raise StorageError(f"task sets {clash} share their names with eval sets in eval_sets.yaml: decontamination "
                           "reports hits by name, rename one of them")
    return EvalIndexes({**out, **task_hashes}, {**items, **task_items})


def quality_model(store: Storage, recipe: CleaningRecipe) -> bytes | None:
    if not (recipe.quality.score or recipe.quality.filter):
        return None
    if not store.is_committed(layout.QUALITY):
        raise StorageError("quality scoring is on but quality_classifier is not materialized; materialize it first")
    with store.fs.open(store.committed_uri(layout.QUALITY, MODEL_NAME), "rb") as f:
        return f.read()
