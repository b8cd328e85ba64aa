"""The decontamination curation step: counts per eval set and per eval item (which item, which document).

Its counts land in the cleaning stats (`curation_counts`, summed over the run) with the smallest ids of
the documents behind each count (`curation_examples`), so a key per item names the documents holding it:
`decontamination[<eval set>]:item[<item id>]`. The items behind a hit are found only for documents the
n-gram index already matched (rare), with the shared matcher (data.item_hits) at the same n.
"""

from __future__ import annotations

from marin_assets.data.curate.decontaminate import REASON_PREFIX, decontaminate, normalized_words
from marin_assets.data.curate.item_hits import EvalIndexes, item_hits
from marin_assets.data.curate.step_outcome import StepOutcome


def item_key(eval_set: str, item: str) -> str:
    return f"{REASON_PREFIX}[{eval_set}]:item[{item}]"


class DecontaminationStep:
    """The curation step: counts per eval set and item, rejection reason decontamination:<eval set>."""

    name = "decontamination"

    def __init__(self, index_handle, ngram: int, policy: str, min_remaining_fraction: float):
        self.index_handle, self.ngram, self.policy, self.min_remaining = index_handle, ngram, policy, min_remaining_fraction

    def apply(self, text: str) -> StepOutcome:
        value = self.index_handle.value  # EvalIndexes, or a plain {eval set: hashes} without items
        hashes, items = (value.hashes, value.items) if isinstance(value, EvalIndexes) else (value, {})
        result = decontaminate(text, hashes, ngram=self.ngram, policy=self.policy,
                               min_remaining_fraction=self.min_remaining)  # fmt: skip
        counts = {f"{REASON_PREFIX}[{name}]:documents": 1 for name in result.matched_ngrams}
        counts.update({f"{REASON_PREFIX}[{name}]:ngrams": n for name, n in result.matched_ngrams.items()})
        if result.matched_ngrams and items:
            words = normalized_words(text)
            for name in result.matched_ngrams:
                if name in items:
                    counts.update({item_key(name, hit["item"]): 1 for hit in item_hits("", text, items[name], words)})
        if result.removed_words and not result.reject:
            counts[f"{REASON_PREFIX}:words_removed"] = result.removed_words
            counts[f"{REASON_PREFIX}:documents_cut"] = 1
        return StepOutcome(result.text, counts, result.reject)


def hits_per_item(counts: dict[str, int], examples: dict[str, list[str]]) -> list[dict]:
    """The cleaning stats' per-item keys as rows: eval set, item, documents holding it, example document ids."""
    rows = []
    for key, n in counts.items():
        head, sep, item = key.partition("]:item[")
        if sep and head.startswith(f"{REASON_PREFIX}[") and item.endswith("]"):
            rows.append({"eval_set": head[len(REASON_PREFIX) + 1:], "item": item[:-1], "documents": n,
                         "example_documents": list(examples.get(key, []))})
    return sorted(rows, key=lambda r: (-r["documents"], r["eval_set"], r["item"]))
