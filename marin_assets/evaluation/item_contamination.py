"""A task set as a decontamination set, reporting hits per eval item: which item, which document (pure).

Uses the data stage's own normalisation and n-gram hashes (data.decontaminate), so a hit here is a
hit there. Each item contributes the n-grams of each of its text fields; an item shorter than n
words contributes its whole text as one shorter n-gram (BLiMP's sentences are 4-12 words, so at
the usual n = 13 they would otherwise never match anything). `item_hits` names, for one document,
every (task, item) it shares an n-gram with; `eval_set_rows` writes the set as the eval-sets
registry's JSONL (id + text fields), to register it for the cleaning stage's decontamination.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass

from marin_assets.data.decontaminate import ngram_hashes, normalized_words
from marin_assets.evaluation.task_sets import TaskSetSpec, verified_files


@dataclass(frozen=True)
class ItemIndex:
    """n-gram hash -> the (task, item id) pairs holding it, for every n-gram length in use."""

    ngram: int
    owners: dict[int, dict[int, list[tuple[str, str]]]]  # length -> hash -> [(task, item id)]


def item_ids_and_texts(spec: TaskSetSpec, text_fields: list[str], id_field: str | None = None):
    """(task, item id, field, text) per text field of every item; the id is the line number unless `id_field`."""
    for file_name, path in verified_files(spec).items():
        task = spec.task_name(file_name)
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                item = json.loads(line)
                item_id = str(item[id_field]) if id_field else str(number)
                for field in text_fields:
                    if not isinstance(item.get(field), str):
                        raise ValueError(f"task set {spec.name}: {path} line {number}: no text field {field!r}")
                    yield task, item_id, field, item[field]


def build_item_index(rows, ngram: int = 13) -> ItemIndex:
    owners: dict[int, dict[int, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    for task, item_id, _, text in rows:
        words = normalized_words(text)
        n = min(ngram, len(words))
        if n == 0:
            continue
        for h in set(ngram_hashes(words, n).tolist()):
            if (task, item_id) not in owners[n][h]:
                owners[n][h].append((task, item_id))
    return ItemIndex(ngram, {n: dict(m) for n, m in owners.items()})


def item_hits(document_id: str, text: str, index: ItemIndex) -> list[dict]:
    """Every eval item the document shares an n-gram with: {task, item, document, ngrams}."""
    words = normalized_words(text)
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


def eval_set_rows(spec: TaskSetSpec, text_fields: list[str]) -> list[dict]:
    """The task set as eval-sets registry rows: {"id": "<task>/<item>", <field>: text, ...} per item."""
    rows: dict[str, dict] = {}
    for task, item_id, field, text in item_ids_and_texts(spec, text_fields):
        rows.setdefault(f"{task}/{item_id}", {"id": f"{task}/{item_id}"})[field] = text
    return list(rows.values())
