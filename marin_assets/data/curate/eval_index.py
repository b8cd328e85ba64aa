"""An eval set's stored form (eval/<name>/): its normalised items, its hashed n-gram index, and its
raw text.

Written once per eval-set version by the eval_set asset; the index is read by every cleaned_documents
partition, the raw text (texts.parquet: id, text as the registry file holds it) by the training runs'
per-domain evaluation, whose bits per byte count that text's UTF-8 bytes.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.data.curate.decontaminate import build_index, normalized_words
from marin_assets.data.curate.eval_sets import EvalSetSpec, read_items
from marin_assets.data.spark.parquet_output import write_arrow_table

ITEMS, NGRAMS, SUMMARY, TEXTS = "items.parquet", "ngrams.parquet", "index.json", layout.EVAL_TEXTS


def build(spec: EvalSetSpec, ngram: int, out_dir: str) -> dict:
    """Write items.parquet (id, normalised text, words) and ngrams.parquet (sorted hashes); return the summary."""
    items = list(read_items(spec))
    ids = [item_id for item_id, _ in items]
    if len(set(ids)) != len(ids):
        raise ValueError(f"eval set {spec.name}: duplicate item ids")
    words = [normalized_words(text) for _, text in items]
    too_short = [item_id for item_id, w in zip(ids, words) if len(w) < ngram]
    index = build_index((text for _, text in items), ngram)
    write_arrow_table(pa.table({"id": ids, "text": [" ".join(w) for w in words], "words": [len(w) for w in words]}),
                      f"{out_dir}/{ITEMS}")  # fmt: skip
    write_arrow_table(pa.table({"hash": index.view(np.int64)}), f"{out_dir}/{NGRAMS}")
    write_arrow_table(pa.table({"id": ids, "text": [text for _, text in items]}), f"{out_dir}/{TEXTS}")
    return {"eval_set": spec.name, "ngram": ngram, "items": len(items), "ngrams": int(index.size),
            "items_too_short": too_short}  # fmt: skip


def read_index(storage: Storage, name: str) -> np.ndarray:
    """The committed sorted uint64 n-gram hashes of one eval set."""
    storage.require_committed(layout.EVAL, name)
    with storage.fs.open(storage.committed_uri(layout.EVAL, name, NGRAMS), "rb") as f:
        index = pq.read_table(f).column("hash").to_numpy().view(np.uint64)
    if (index[1:] < index[:-1]).any():  # decontaminate's binary search needs the order build() wrote
        raise ValueError(f"eval set {name}: n-gram index {NGRAMS} is not sorted; rebuild the eval set")
    return index


def read_summary(storage: Storage, name: str) -> dict:
    return storage.read_json(layout.EVAL, name, SUMMARY)
