"""Tokenize one source's cleaned documents into Parquet token shards, as a Spark job.

Shards are cut every `documents_per_shard` input documents, in input order, so shard boundaries
(and bytes) do not depend on where or how many executors ran. The driver plans the shards from the
Parquet footers (row counts) and groups them into a few tasks per core (task_plan.py); each task
reads its shards' rows straight from storage, encodes them with the tokenizer files broadcast to
the executors, writes each shard and returns its counts (one row per shard comes back, never
documents or tokens).
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import json
import os
import posixpath
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from marin_assets.core import layout
from marin_assets.core.output_check import verify_committed
from marin_assets.core.storage import Storage
from marin_assets.tokenize.encoding import EncodeSettings, encode_and_write_shard, serial_worker_init
from marin_assets.tokenize.shards import SHARD_PATTERN, length_histogram
from marin_assets.tokenize.task_plan import Segments, shard_plan, shard_weights, task_count, task_groups
from marin_assets.tokenize.tokenizer_files import TOKENIZER_FILES

DOCUMENTS_FOLDER = "documents"
READ_BATCH_ROWS = 1_024
STATS_FILE = "stats.json"


def cleaned_document_files(storage: Storage, source: str) -> list[str]:
    """Absolute URIs of a committed source's cleaned document files, in a stable order.

    The output is checked against its manifest first: a deleted or truncated file is refused by name
    rather than read as a source with fewer (or no) documents."""
    base = verify_committed(storage, layout.CLEANED, source)
    rels = [r for r in storage.list_files(layout.CLEANED, source)
            if r.startswith(f"{DOCUMENTS_FOLDER}/") and r.endswith(".parquet")]
    return [f"{base}/{r}" for r in rels]


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


def file_row_counts(files: list[str]) -> list[int]:
    counts = []
    for uri in files:
        with fsspec.open(uri, "rb") as f:
            counts.append(pq.ParquetFile(f).metadata.num_rows)
    return counts


def count_rows(files: list[str]) -> int:
    return sum(file_row_counts(files))


def read_rows(uri: str, start: int, end: int, columns=("id", "text")) -> pa.Table:
    """Rows [start, end) of a Parquet file: only the row groups that hold them are read, and a row
    group is decoded batch by batch up to `end` only (a shard is often a small part of a file)."""
    with fsspec.open(uri, "rb") as f:
        pf = pq.ParquetFile(f)
        batches, offset = [], 0
        for g in range(pf.metadata.num_row_groups):
            first, offset = offset, offset + pf.metadata.row_group(g).num_rows
            if first >= end:
                break
            if offset <= start:
                continue
            for batch in pf.iter_batches(batch_size=READ_BATCH_ROWS, row_groups=[g], columns=list(columns)):
                lo, hi = max(start - first, 0), min(end - first, batch.num_rows)
                if hi > lo:
                    batches.append(batch.slice(lo, hi - lo))
                first += batch.num_rows
                if first >= end:
                    break
        schema = pa.schema([pf.schema_arrow.field(c) for c in columns])
    return pa.Table.from_batches(batches, schema=schema)


@functools.cache
def _executor_tokenizer_dir(tokenizer_hash: str, files: tuple[tuple[str, bytes], ...]) -> str:
    """The broadcast tokenizer files as a folder on this executor (once per Python worker)."""
    folder = tempfile.mkdtemp(prefix=f"marin-tokenizer-{tokenizer_hash[:12]}-")
    atexit.register(shutil.rmtree, folder, True)
    for name, data in files:
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    return folder


def _shard_task(files: list[str], source: str, out_dir: str, settings: EncodeSettings, tokenizer):
    """Spark task body: [(shard index, segments), ...] -> each shard's counts, after writing it."""

    def run(shards: list[tuple[int, Segments]]) -> list[tuple]:
        serial_worker_init()  # one task = one core: no Rust thread pool on top of Spark's
        local = dataclasses.replace(settings, tokenizer_dir=_executor_tokenizer_dir(settings.tokenizer_hash,
                                                                                   tokenizer.value))  # fmt: skip
        return [write_one(index, segments, local) for index, segments in shards]

    def write_one(index: int, segments: Segments, local: EncodeSettings) -> tuple:
        table = pa.concat_tables([read_rows(files[f], a, b) for f, a, b in segments])
        lengths = encode_and_write_shard(posixpath.join(out_dir, SHARD_PATTERN.format(index)),
                                         table.column("id").combine_chunks(), source,
                                         table.column("text").to_pylist(), local)  # fmt: skip
        special = int(settings.add_bos) + int(settings.add_eos)
        return (index, int(lengths.size), int(lengths.sum()), int(np.sum(lengths == special)),
                int(lengths.max()) if lengths.size else 0, json.dumps(length_histogram(lengths)))  # fmt: skip

    return run


def merge_histograms(histograms: list[dict[str, int]]) -> dict[str, int]:
    """Sum of length_histogram()s: the histogram of all their documents (buckets by lower bound)."""
    total: dict[str, int] = {}
    for hist in histograms:
        for bucket, n in hist.items():
            total[bucket] = total.get(bucket, 0) + n
    return dict(sorted(total.items(), key=lambda kv: 0 if kv[0].startswith("<=") else int(kv[0].split("-")[0])))


def tokenize_source(spark, files: list[str], source: str, out_dir: str, settings: EncodeSettings,
                    documents_per_shard: int) -> dict:
    """Write out_dir/shard-NNNNN.parquet on the Spark executors; return the stats for metadata and stats.json."""
    file_rows = file_row_counts(files)
    documents = sum(file_rows)
    plan = shard_plan(file_rows, documents_per_shard)
    counts = []
    if plan:
        fsspec.core.url_to_fs(out_dir)[0].makedirs(out_dir, exist_ok=True)
        folder = Path(settings.tokenizer_dir)
        tokenizer = spark.sparkContext.broadcast(tuple((name, (folder / name).read_bytes()) for name in TOKENIZER_FILES))
        weights = shard_weights(files, plan)
        groups = task_groups(weights, task_count(weights, spark.sparkContext.defaultParallelism))
        tasks = spark.sparkContext.parallelize([[(i, plan[i]) for i in group] for group in groups], len(groups))
        counts = sorted(tasks.flatMap(_shard_task(files, source, out_dir, settings, tokenizer)).collect())
        tokenizer.destroy()
    written = sum(c[1] for c in counts)
    if written != documents or [c[0] for c in counts] != list(range(len(plan))):
        raise RuntimeError(f"{source}: read {documents} documents but wrote {written} in {len(counts)} shards")
    tokens = sum(c[2] for c in counts)
    return {
        "source": source,
        "documents": int(documents),
        "tokens": int(tokens),
        "empty_documents": sum(c[3] for c in counts),
        "max_document_tokens": max((c[4] for c in counts), default=0),
        "mean_document_tokens": round(tokens / documents, 2) if documents else 0.0,
        "tokens_per_document_histogram": merge_histograms([json.loads(c[5]) for c in counts]),
        "tokenizer_hash": settings.tokenizer_hash,
        "add_bos": settings.add_bos,
        "add_eos": settings.add_eos,
        "shards": [SHARD_PATTERN.format(i) for i in range(len(plan))],
    }
