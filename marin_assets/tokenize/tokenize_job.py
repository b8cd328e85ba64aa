"""Tokenize one source's cleaned documents into Parquet token shards, as a Spark job.

Shards are cut every `documents_per_shard` input documents, in input order, so shard boundaries
(and bytes) do not depend on where or how many executors ran. The driver plans the shards from the
Parquet footers (row counts) and sends one small task per shard; each task reads its rows
straight from storage, encodes them with the tokenizer files broadcast to the executors, writes
its shard and returns its counts (one row per shard comes back, never documents or tokens).
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
from marin_assets.core.storage import Storage
from marin_assets.tokenize.encoding import EncodeSettings, encode_and_write_shard, serial_worker_init
from marin_assets.tokenize.shards import SHARD_PATTERN, length_histogram
from marin_assets.tokenize.tokenizer_files import TOKENIZER_FILES

DOCUMENTS_FOLDER = "documents"
STATS_FILE = "stats.json"


def cleaned_document_files(storage: Storage, source: str) -> list[str]:
    """Absolute URIs of a committed source's cleaned document files, in a stable order."""
    base = storage.require_committed(layout.CLEANED, source)
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


def shard_plan(file_rows: list[int], documents_per_shard: int) -> list[list[tuple[int, int, int]]]:
    """Per shard, its (file index, first row, end row) segments: shard i holds documents
    [i * documents_per_shard, (i + 1) * documents_per_shard) of the files read in order."""
    plan, current, room = [], [], documents_per_shard
    for index, rows in enumerate(file_rows):
        start = 0
        while start < rows:
            take = min(room, rows - start)
            current.append((index, start, start + take))
            start, room = start + take, room - take
            if room == 0:
                plan.append(current)
                current, room = [], documents_per_shard
    if current:
        plan.append(current)
    return plan


def read_rows(uri: str, start: int, end: int, columns=("id", "text")) -> pa.Table:
    """Rows [start, end) of a Parquet file, reading only the row groups that hold them."""
    with fsspec.open(uri, "rb") as f:
        pf = pq.ParquetFile(f)
        groups, first, offset = [], None, 0
        for g in range(pf.metadata.num_row_groups):
            n = pf.metadata.row_group(g).num_rows
            if offset < end and offset + n > start:
                groups.append(g)
                first = offset if first is None else first
            offset += n
        table = pf.read_row_groups(groups, columns=list(columns))
    return table.slice(start - first, end - start)


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
    """Spark task body: (shard index, segments) -> that shard's counts, after writing it."""

    def run(task: tuple[int, list[tuple[int, int, int]]]) -> tuple:
        serial_worker_init()  # one task = one core: no Rust thread pool on top of Spark's
        index, segments = task
        local = dataclasses.replace(settings, tokenizer_dir=_executor_tokenizer_dir(settings.tokenizer_hash,
                                                                                   tokenizer.value))  # fmt: skip
        table = pa.concat_tables([read_rows(files[f], a, b) for f, a, b in segments])
        lengths = encode_and_write_shard(posixpath.join(out_dir, SHARD_PATTERN.format(index)),
                                         table.column("id").to_pylist(), source, table.column("text").to_pylist(),
                                         local)  # fmt: skip
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
        tasks = spark.sparkContext.parallelize(list(enumerate(plan)), len(plan))
        counts = sorted(tasks.map(_shard_task(files, source, out_dir, settings, tokenizer)).collect())
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
