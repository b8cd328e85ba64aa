"""Write a planned mixture split without holding the sources in memory: an external shuffle.

The plan orders (source, document) rows for training; output shard k holds plan positions
[k * S, (k + 1) * S). Pass 1 reads each input shard once and sends each of its planned rows (with its
plan position) to a local spill file of the output shard it lands in; pass 2 reads one spill file at
a time, puts its rows in plan order and writes the shard. Memory: one input shard plus one output
shard (the mixture recipe's documents_per_shard); disk: one spilled copy, removed afterwards. The
shards have the same bytes as taking the rows from all sources concatenated in memory.
"""

from __future__ import annotations

import os
import posixpath
import tempfile
from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from marin_assets.core.schemas import TOKENIZED_SCHEMA
from marin_assets.tokenize.mixture_plan import SourceDocuments, split_units
from marin_assets.tokenize.shards import (
    SHARD_PATTERN, ShardError, document_lengths, read_shard, shard_table, write_shard,
)

POSITION = "_position"
_SPILL_SCHEMA = TOKENIZED_SCHEMA.append(pa.field(POSITION, pa.int64(), nullable=False))
_SOURCE_STRIDE = 2**40  # (source, document) -> one sortable int64: documents per source stay below this


def iter_source_tables(shards: list[str]) -> Iterator[tuple[int, pa.Table]]:
    """(index of its first document, table) for each shard of one source, in order."""
    first = 0
    for path in shards:
        table = read_shard(path)
        if not table.schema.equals(TOKENIZED_SCHEMA):
            raise ShardError(f"{path}: schema {table.schema} is not TOKENIZED_SCHEMA")
        yield first, table
        first += table.num_rows


def write_split(rows: np.ndarray, source_shards: list[list[str]], folder: str, rows_per_shard: int,
                tokenizer_hash: str, fs, write_empty: bool) -> int:
    """Write rows ((source index, document index) in plan order) as folder/shard-NNNNN.parquet."""
    fs.makedirs(folder, exist_ok=True)
    n_shards = -(-len(rows) // rows_per_shard)
    if n_shards == 0:
        if write_empty:
            write_shard(shard_table([], [], pa.array([], pa.list_(pa.int32())), tokenizer_hash),
                        posixpath.join(folder, SHARD_PATTERN.format(0)))  # fmt: skip
        return int(write_empty)
    with tempfile.TemporaryDirectory(prefix="marin-mixture-spill-") as spill:
        _spill(rows, source_shards, spill, rows_per_shard, n_shards)
        for k in range(n_shards):
            with pa.memory_map(os.path.join(spill, f"{k}.arrow")) as source:
                table = pa.ipc.open_stream(source).read_all()
            table = table.sort_by(POSITION)
            expected = np.arange(k * rows_per_shard, min(len(rows), (k + 1) * rows_per_shard))
            if not np.array_equal(table.column(POSITION).to_numpy(), expected):
                raise RuntimeError(f"mixture shard {k}: spilled rows do not cover its plan positions")
            write_shard(shard_table(table.column("id").combine_chunks(), table.column("source").combine_chunks(),
                                    table.column("tokens").combine_chunks(), tokenizer_hash),
                        posixpath.join(folder, SHARD_PATTERN.format(k)))  # fmt: skip
            os.remove(os.path.join(spill, f"{k}.arrow"))
    return n_shards


def _spill(rows: np.ndarray, source_shards: list[list[str]], spill: str, rows_per_shard: int, n_shards: int) -> None:
    # positions of each source's rows, sorted by document: a shard's rows are one searchsorted slice
    order = np.lexsort((rows[:, 1], rows[:, 0]))
    documents = rows[order, 1]
    composite = rows[order, 0].astype(np.int64) * _SOURCE_STRIDE + documents
    writers = {}
    try:
        for s, shards in enumerate(source_shards):
            for first, table in iter_source_tables(shards):
                lo, hi = np.searchsorted(composite, s * _SOURCE_STRIDE + np.array([first, first + table.num_rows]))
                if lo == hi:
                    continue
                positions = order[lo:hi]
                by_position = np.argsort(positions, kind="stable")
                positions = positions[by_position]
                picked = table.take(pa.array(documents[lo:hi][by_position] - first))
                picked = pa.Table.from_arrays([*picked.columns, pa.array(positions, pa.int64())], schema=_SPILL_SCHEMA)
                bounds = np.searchsorted(positions, np.arange(n_shards + 1) * rows_per_shard)
                for k in np.flatnonzero(bounds[1:] > bounds[:-1]):
                    if k not in writers:
                        sink = pa.OSFile(os.path.join(spill, f"{k}.arrow"), "wb")
                        writers[k] = (sink, pa.ipc.new_stream(sink, _SPILL_SCHEMA))
                    part = picked.slice(bounds[k], bounds[k + 1] - bounds[k])
                    writers[k][1].write_table(part)
    finally:
        for sink, writer in writers.values():
            writer.close()
            sink.close()
    for k in range(n_shards):  # a shard every row of which failed to arrive is caught in pass 2
        if k not in writers:
            with pa.OSFile(os.path.join(spill, f"{k}.arrow"), "wb") as sink, pa.ipc.new_stream(sink, _SPILL_SCHEMA):
                pass


def source_documents(name: str, shards: list[str]) -> SourceDocuments:
    """What the planner needs of one source, read shard by shard: split units and lengths (not ids, not tokens)."""
    units, lengths = [np.zeros(0, np.float64)], [np.zeros(0, np.int64)]
    for _, table in iter_source_tables(shards):
        units.append(split_units(name, table.column("id").to_pylist()))
        lengths.append(document_lengths(table.column("tokens")))
    return SourceDocuments(name, np.concatenate(units), np.concatenate(lengths))
