"""The order of a planned split as a local file of ORDERED rows, by an external sort with bounded memory.

Train: every taken (source, document, pass) is ordered by its seeded order key (mixture_keys), ties by
(source, document, pass). Pass A counts rows per key bucket (the key's top bits) and groups consecutive
buckets into ranges of at most `chunk` rows; pass B appends each row to its range's spill file; then
each spill file in key order is sorted in memory and appended to the ordered file. Validation: source by
source, in document order. Memory: `chunk` rows (plus one bucket, should a single bucket hold more).
"""

from __future__ import annotations

import os

import numpy as np

from marin_assets.tokenize.mixture_keys import BUCKETS, order_keys, top_bucket
from marin_assets.tokenize.mixture_plan import MixturePlan

ORDERED = np.dtype([("source", "<i4"), ("document", "<i4"), ("length", "<i8")])  # 16 bytes a row on disk
_SPILLED = np.dtype([("key", "<u8"), ("source", "<i4"), ("document", "<i4"), ("pass", "<i4"), ("length", "<i8")])


def order_train(plan: MixturePlan, documents: list, path: str, work: str) -> int:
    """Write the train rows of plan (documents: sources in plan order) to path in training order; row count."""
    counts = np.zeros(BUCKETS, np.int64)
    for _, rows in _train_rows(plan, documents):
        counts += np.bincount(top_bucket(rows["key"]), minlength=BUCKETS)
    range_of = consecutive_ranges(counts, plan.chunk)
    ranges = int(range_of[-1]) + 1
    for _, rows in _train_rows(plan, documents):
        of = range_of[top_bucket(rows["key"])]
        by_range = np.argsort(of, kind="stable")
        rows, of = rows[by_range], of[by_range]
        for a, b in runs(of):
            with open(os.path.join(work, f"range-{of[a]}.bin"), "ab") as f:
                rows[a:b].tofile(f)
    written = 0
    with open(path, "wb") as out:
        for r in range(ranges):
            spill = os.path.join(work, f"range-{r}.bin")
            if not os.path.exists(spill):
                continue
            rows = np.fromfile(spill, dtype=_SPILLED)
            os.remove(spill)
            rows = rows[np.lexsort((rows["pass"], rows["document"], rows["source"], rows["key"]))]
            _ordered(rows["source"], rows["document"], rows["length"]).tofile(out)
            written += rows.size
    if written != plan.train_documents:
        raise RuntimeError(f"mixture train order: {written} rows spilled, the plan has {plan.train_documents}")
    return written


def order_validation(plan: MixturePlan, documents: list, path: str) -> int:
    written = 0
    with open(path, "wb") as out:
        for s, docs in enumerate(documents):
            for indices, lengths in plan.validation_chunks(docs):
                _ordered(np.full(indices.size, s), indices, lengths).tofile(out)
                written += indices.size
    return written


def _ordered(sources, documents, lengths) -> np.ndarray:
    rows = np.empty(len(lengths), ORDERED)
    rows["source"], rows["document"], rows["length"] = sources, documents, lengths
    return rows


def _train_rows(plan: MixturePlan, documents: list):
    """(source index, _SPILLED rows) of every taken row, at most plan.chunk rows at a time."""
    for s, docs in enumerate(documents):
        for p, indices, hashes, lengths in plan.train_chunks(docs):
            rows = np.empty(indices.size, _SPILLED)
            rows["key"], rows["source"], rows["document"] = order_keys(hashes, plan.seed, p), s, indices
            rows["pass"], rows["length"] = p, lengths
            yield s, rows


def consecutive_ranges(counts: np.ndarray, limit: int) -> np.ndarray:
    """Range of each entry: consecutive entries, at most `limit` rows a range unless one entry holds more."""
    ends = np.cumsum(counts)
    range_of, r, filled_to, e = np.zeros(counts.size, np.int64), 0, 0, 0
    while e < counts.size:  # a step per range, not per entry: its last entry by searchsorted
        last = max(e, int(np.searchsorted(ends, filled_to + limit, side="right")) - 1)
        range_of[e : last + 1], filled_to, e, r = r, int(ends[last]), last + 1, r + 1
    return range_of


def runs(values: np.ndarray) -> list[tuple[int, int]]:
    """[a, b) of each run of equal values."""
    if not values.size:
        return []
    cuts = np.concatenate([[0], np.flatnonzero(np.diff(values)) + 1, [values.size]]).tolist()
    return list(zip(cuts[:-1], cuts[1:]))


def read_ordered(path: str, start: int, stop: int) -> np.ndarray:
    """Rows [start, stop) of an ordered file."""
    with open(path, "rb") as f:
        f.seek(start * ORDERED.itemsize)
        return np.fromfile(f, dtype=ORDERED, count=stop - start)


def iter_ordered_lengths(path: str, total: int, chunk: int):
    for start in range(0, total, chunk):
        yield read_ordered(path, start, min(total, start + chunk))["length"]
