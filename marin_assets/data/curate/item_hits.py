"""Which eval items a document contains (which item, which document), not only which eval set (pure).

Uses the decontamination's own normalisation and n-gram hashes (data.decontaminate), so a hit here is
a hit there. Each item contributes the n-grams of each of its texts; an item shorter than n words
contributes its whole text as one shorter n-gram (`build_item_index(..., short_items=True)`, what a task
set of short sentences needs; the cleaning job's 13-gram decontamination keeps only full n-grams, so its
per-item report names exactly the items behind the n-grams it matched). The evaluation stage's
task-set contamination (evaluation.item_contamination) and the cleaning job both use this matcher.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from marin_assets.data.curate.decontaminate import ngram_hashes, normalized_words


@dataclass(frozen=True)
class ItemIndex:
    """n-gram hash -> the (task, item id) pairs holding it, for every n-gram length in use."""

    ngram: int
    owners: dict[int, dict[int, list[tuple[str, str]]]]  # length -> hash -> [(task, item id)]


@dataclass(frozen=True)
class EvalIndexes:
    """What the cleaning job's decontamination reads: per eval set, its sorted n-gram hashes and its items."""

    hashes: Mapping[str, np.ndarray]
    items: Mapping[str, ItemIndex] = field(default_factory=dict)

    def __bool__(self) -> bool:  # no eval set registered: no decontamination step, as with an empty dict
        return bool(self.hashes)


def build_item_index(rows: Iterable[tuple[str, str, str, str]], ngram: int = 13,
                     short_items: bool = True, min_words: int = 1) -> ItemIndex:
    """rows: (task, item id, field, text). short_items=False leaves out items shorter than `ngram` words;
    with short_items, items shorter than `min_words` are left out (a 3-word sentence is ordinary English)."""
    owners: dict[int, dict[int, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    for task, item_id, _, text in rows:
        words = normalized_words(text)
        n = min(ngram, len(words)) if short_items else ngram
        if n == 0 or len(words) < max(n, min_words):
            continue
        for h in set(ngram_hashes(words, n).tolist()):
            if (task, item_id) not in owners[n][h]:
                owners[n][h].append((task, item_id))
    return ItemIndex(ngram, {n: dict(m) for n, m in owners.items()})


def item_hits(document_id: str, text: str, index: ItemIndex, words: list[str] | None = None) -> list[dict]:
    """Every eval item the document shares an n-gram with: {task, item, document, ngrams}."""
    words = normalized_words(text) if words is None else words
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for n, table in index.owners.items():
        for h in ngram_hashes(words, n).tolist():
            for owner in table.get(h, ()):
                counts[owner] += 1
    return [{"task": task, "item": item, "document": document_id, "ngrams": hits}
            for (task, item), hits in sorted(counts.items())]


def hits_by_item(documents, index: ItemIndex) -> dict[str, list[str]]:
    """"task/item" -> the ids of the documents that contain it, over (document id, text) pairs."""
    found: dict[str, list[str]] = defaultdict(list)
    for document_id, text in documents:
        for hit in item_hits(document_id, text, index):
            found[f"{hit['task']}/{hit['item']}"].append(document_id)
    return dict(found)
