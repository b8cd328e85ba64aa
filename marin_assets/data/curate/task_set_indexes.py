"""The registered task sets' items as cleaning's decontamination indexes, matched whole when short (pure).

The evaluation stage's task_set_decontamination asset commits each decontaminating task set's items
(normalised; id `<harness task>/<line>`) and a manifest naming them; the data stage reads that folder
by its layout name, never the evaluation stage's code. A fixed 13-gram index never matches BLiMP
(sentences of 2-12 words), so an item shorter than n is indexed whole, at n = its length: a document
matches it when it holds the item's words contiguously. Items shorter than `min_item_words` are not
indexed and are listed as too short: a 3-word BLiMP sentence ("The people shrug.") occurs in ordinary
English (an article of the extraction benchmark), a 4-word one did not (docs/data_stage.md has the figures).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from marin_assets.core import layout
from marin_assets.core.storage import Storage, StorageError
from marin_assets.data.curate.decontaminate import ngram_hashes, normalized_words
from marin_assets.data.curate.item_hits import ItemIndex, build_item_index

MANIFEST = "manifest.json"


def short_item_index(ids: list[str], texts: list[str], ngram: int, min_words: int
                     ) -> tuple[dict[int, np.ndarray], list[str]]:
    """({n: sorted uint64 hashes}, ids too short): each item whole at n = min(ngram, its words), every
    `ngram`-gram of the longer ones; items under min_words left out."""
    parts: dict[int, list[np.ndarray]] = defaultdict(list)
    too_short = []
    for item_id, text in zip(ids, texts):
        words = normalized_words(text)
        if len(words) < min_words:
            too_short.append(item_id)
            continue
        n = min(ngram, len(words))
        parts[n].append(ngram_hashes(words, n))
    return {n: np.unique(np.concatenate(p)) for n, p in sorted(parts.items())}, sorted(set(too_short))


def read_task_set_indexes(store: Storage, ngram: int, min_words: int
                          ) -> tuple[dict[str, dict[int, np.ndarray]], dict[str, ItemIndex], dict]:
    """(hashes by task set, item index by task set, summary) from the committed task_set_decontamination."""
    import pyarrow.parquet as pq

    if not store.is_committed(layout.TASK_SET_DECONTAMINATION):
        raise StorageError("decontamination is on but task_set_decontamination (every registered task set's "
                           "items) is not materialized; materialize it first")
    manifest = store.read_json(layout.TASK_SET_DECONTAMINATION, MANIFEST)
    hashes, items, summary = {}, {}, {}
    for name, entry in sorted(manifest["task_sets"].items()):
        with store.fs.open(store.committed_uri(layout.TASK_SET_DECONTAMINATION, entry["file"]), "rb") as f:
            table = pq.read_table(f, columns=["id", "field", "text"]).to_pydict()
        hashes[name], too_short = short_item_index(table["id"], table["text"], ngram, min_words)
        rows = ((name, i, field, text) for i, field, text in zip(table["id"], table["field"], table["text"]))
        items[name] = build_item_index(rows, ngram, short_items=True, min_words=min_words)
        summary[name] = {"items": entry["items"], "items_too_short": len(too_short),
                         "lengths": sorted(hashes[name])}
    return hashes, items, summary
