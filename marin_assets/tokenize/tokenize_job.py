"""Tokenize one source's cleaned documents into Parquet token shards, in parallel.

Shards are cut every `documents_per_shard` input documents, in input order, so shard boundaries
(and bytes) do not depend on how many workers ran. With one worker, shards are encoded in this
process on the tokenizer's own (Rust, all-core) thread pool; with more, by a pool of
single-threaded processes (spawned: the caller's main module must be import-safe).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import posixpath
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import fsspec
import numpy as np
import pyarrow.parquet as pq

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.tokenize.encoding import EncodeSettings, encode_and_write_shard, serial_worker_init
from marin_assets.tokenize.shards import SHARD_PATTERN, length_histogram

DOCUMENTS_FOLDER = "documents"
STATS_FILE = "stats.json"


def cleaned_document_files(storage: Storage, source: str) -> list[str]:
    """Absolute URIs of a committed source's cleaned document files, in a stable order."""
    base = storage.require_committed(layout.CLEANED, source)
    rels = [r for r in storage.list_files(layout.CLEANED, source)
            if r.startswith(f"{DOCUMENTS_FOLDER}/") and r.endswith(".parquet")]
    return [f"{base}/{r}" for r in rels]


def count_rows(files: list[str]) -> int:
    total = 0
    for uri in files:
        with fsspec.open(uri, "rb") as f:
            total += pq.ParquetFile(f).metadata.num_rows
    return total


def iter_documents(files: list[str], rows: int, columns=("id", "text")) -> Iterator[dict[str, list]]:
    """Batches of exactly `rows` documents (the last may be shorter) across files, in order."""
    pending: dict[str, list] = {c: [] for c in columns}
    for uri in files:
        with fsspec.open(uri, "rb") as f:
            for batch in pq.ParquetFile(f).iter_batches(batch_size=rows, columns=list(columns)):
                for c in columns:
                    pending[c].extend(batch.column(c).to_pylist())
                while len(pending[columns[0]]) >= rows:
                    yield {c: v[:rows] for c, v in pending.items()}
                    pending = {c: v[rows:] for c, v in pending.items()}
    if pending[columns[0]]:
        yield pending


def tokenize_source(files: list[str], source: str, out_dir: str, settings: EncodeSettings,
                    documents_per_shard: int, workers: int = 1) -> dict:
    """Write out_dir/shard-NNNNN.parquet; return the stats recorded in metadata and stats.json."""
    documents = count_rows(files)
    shard_count = math.ceil(documents / documents_per_shard)
    workers = min(workers or os.cpu_count() or 1, shard_count)
    tasks = (
        (posixpath.join(out_dir, SHARD_PATTERN.format(i)), batch["id"], source, batch["text"], settings)
        for i, batch in enumerate(iter_documents(files, documents_per_shard))
    )
    lengths = np.concatenate([np.zeros(0, np.int64), *_run(tasks, workers)])
    if lengths.size != documents:
        raise RuntimeError(f"{source}: read {documents} documents but wrote {lengths.size}")
    special = int(settings.add_bos) + int(settings.add_eos)
    return {
        "source": source,
        "documents": int(documents),
        "tokens": int(lengths.sum()),
        "empty_documents": int(np.sum(lengths == special)),
        "max_document_tokens": int(lengths.max()) if documents else 0,
        "mean_document_tokens": round(float(lengths.mean()), 2) if documents else 0.0,
        "tokens_per_document_histogram": length_histogram(lengths),
        "tokenizer_hash": settings.tokenizer_hash,
        "add_bos": settings.add_bos,
        "add_eos": settings.add_eos,
        "shards": [SHARD_PATTERN.format(i) for i in range(shard_count)],
    }


def _run(tasks, workers: int) -> Iterator[np.ndarray]:
    if workers <= 1:
        for task in tasks:
            yield encode_and_write_shard(*task)
        return
    # spawn, not fork: the parent may already run the tokenizer's Rust threads (fork would deadlock).
    context = multiprocessing.get_context("spawn")

    with ProcessPoolExecutor(workers, mp_context=context, initializer=serial_worker_init) as pool:
        pending = deque()
        for task in tasks:
            pending.append(pool.submit(encode_and_write_shard, *task))
            if len(pending) > workers:  # bound memory: a few shards of text in flight
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
