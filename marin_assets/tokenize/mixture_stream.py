"""Write a planned mixture split without holding the sources in memory: an external shuffle.

The plan orders (source, document) rows for training; output shard k holds plan positions
[k * S, (k + 1) * S) (S: the recipe's documents_per_shard), cut into row groups of about
shards.ROW_GROUP_TOKENS tokens by the rule write_shard uses (split_layout). Pass 1 reads the input
shards row group by row group and sends each planned row (with its plan position) to a local spill
file of the output row group it lands in; pass 2 reads one spill file at a time, puts its rows in plan
order and appends them to their shard as one row group. Memory: one input and one output row group
(a few tens of MB, whatever S is) plus the plan; disk: one spilled copy, removed as it is written.
The shards have the same bytes as write_shard of the rows taken from all sources in memory.
"""

from __future__ import annotations

import os
import posixpath
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from marin_assets.core.schemas import TOKENIZED_SCHEMA
from marin_assets.tokenize.mixture_plan import SourceDocuments, split_units
from marin_assets.tokenize.shards import (
    SHARD_PATTERN, ShardError, ShardWriter, document_lengths, iter_row_groups, row_group_bounds, shard_row_count,
    shard_table, write_shard,
)

POSITION = "_position"
_SPILL_SCHEMA = TOKENIZED_SCHEMA.append(pa.field(POSITION, pa.int64(), nullable=False))
MAX_OPEN_SPILLS = 256  # spill files open at once; more output row groups than this take another input pass


def iter_source_tables(shards: list[str]) -> Iterator[tuple[int, pa.Table]]:
    """(index of its first document, table) for each row group of each shard of one source, in order."""
    first = 0
    for path in shards:
        for table in iter_row_groups(path):
            if not table.schema.equals(TOKENIZED_SCHEMA):
                raise ShardError(f"{path}: schema {table.schema} is not TOKENIZED_SCHEMA")
            yield first, table
            first += table.num_rows


@dataclass(frozen=True)
class SplitLayout:
    """Output row group g holds plan positions [starts[g], starts[g + 1]) and belongs to shard shard_of[g]."""

    starts: np.ndarray
    shard_of: np.ndarray


def split_layout(rows: np.ndarray, source_lengths: list[np.ndarray], rows_per_shard: int) -> SplitLayout:
    """Row groups of every output shard, cut by row_group_bounds on its planned documents' token counts."""
    for s, lengths in enumerate(source_lengths):
        mine = rows[rows[:, 0] == s, 1]
        if mine.size and (mine.min() < 0 or mine.max() >= lengths.size):
            raise ValueError(f"plan rows name documents of source {s} outside its {lengths.size} documents")
    starts, shard_of = [], []
    for k, lo in enumerate(range(0, len(rows), rows_per_shard)):
        part = rows[lo : lo + rows_per_shard]
        lengths = np.zeros(len(part), np.int64)
        for s, source in enumerate(source_lengths):
            mine = part[:, 0] == s
            lengths[mine] = source[part[mine, 1]]
        bounds = row_group_bounds(lengths)
        starts.append(lo + bounds[:-1])
        shard_of.append(np.full(len(bounds) - 1, k))
    return SplitLayout(np.concatenate([*starts, [len(rows)]]), np.concatenate(shard_of))


def write_split(rows: np.ndarray, source_shards: list[list[str]], source_lengths: list[np.ndarray], folder: str,
                rows_per_shard: int, tokenizer_hash: str, fs, write_empty: bool) -> int:
    """Write rows ((source index, document index) in plan order) as folder/shard-NNNNN.parquet; source_lengths:
    tokens of each source's documents (the planner's)."""
    fs.makedirs(folder, exist_ok=True)
    if len(rows) == 0:
        if write_empty:
            write_shard(shard_table([], [], pa.array([], pa.list_(pa.int32())), tokenizer_hash),
                        posixpath.join(folder, SHARD_PATTERN.format(0)))  # fmt: skip
        return int(write_empty)
    layout = split_layout(rows, source_lengths, rows_per_shard)
    groups, writer = len(layout.shard_of), None
    with tempfile.TemporaryDirectory(prefix="marin-mixture-spill-") as spill:
        try:
            for lo in range(0, groups, MAX_OPEN_SPILLS):
                window = range(lo, min(groups, lo + MAX_OPEN_SPILLS))
                _spill(rows, source_shards, layout, window, spill)
                for g in window:
                    k = int(layout.shard_of[g])
                    if writer is None or writer[0] != k:
                        if writer is not None:
                            writer[1].close()
                        writer = (k, ShardWriter(posixpath.join(folder, SHARD_PATTERN.format(k)), tokenizer_hash).open())
                    writer[1].write_group(_spilled_group(spill, g, layout, tokenizer_hash))
        finally:
            if writer is not None:
                writer[1].close()
    return int(layout.shard_of[-1]) + 1


def _spilled_group(spill: str, g: int, layout: SplitLayout, tokenizer_hash: str) -> pa.Table:
    """Output row group g from its spill file, in plan order (the file is removed)."""
    path = os.path.join(spill, f"{g}.arrow")
    if not os.path.exists(path):
        raise RuntimeError(f"mixture row group {g}: no spilled rows arrived for its plan positions")
    with pa.OSFile(path) as source:
        table = pa.ipc.open_stream(source).read_all().sort_by(POSITION)
    os.remove(path)
    if not np.array_equal(table.column(POSITION).to_numpy(), np.arange(layout.starts[g], layout.starts[g + 1])):
        raise RuntimeError(f"mixture row group {g}: spilled rows do not cover its plan positions")
    return shard_table(table.column("id").combine_chunks(), table.column("source").combine_chunks(),
                       table.column("tokens").combine_chunks(), tokenizer_hash)  # fmt: skip


def _spill(rows: np.ndarray, source_shards: list[list[str]], layout: SplitLayout, window: range, spill: str) -> None:
    """Pass 1 for the output row groups in window: every planned row of theirs to its group's spill file."""
    first_position, end_position = int(layout.starts[window.start]), int(layout.starts[window.stop])
    writers = {}
    try:
        for s, shards in enumerate(source_shards):
            # this source's plan positions sorted by document (ties stay in plan order): an input row
            # group's rows are one searchsorted slice. One source at a time: a few bytes a planned row.
            # int32 (plan rows are int32): at 1M documents these arrays are the writer's largest per-document state
            positions = (np.flatnonzero(rows[first_position:end_position, 0] == s) + first_position).astype(np.int32)
            if positions.size == 0:
                continue  # none of this window's rows: its shards are not read
            documents = rows[positions, 1]
            by_document = np.argsort(documents, kind="stable")
            positions, documents = positions[by_document], documents[by_document]
            del by_document
            for first, table in iter_source_tables(shards):
                lo, hi = np.searchsorted(documents, [first, first + table.num_rows])
                if lo == hi:
                    continue
                by_position = np.argsort(positions[lo:hi], kind="stable")
                picked_positions = positions[lo:hi][by_position]
                picked = table.take(pa.array(documents[lo:hi][by_position] - first))
                picked = pa.Table.from_arrays([*picked.columns, pa.array(picked_positions, pa.int64())],
                                              schema=_SPILL_SCHEMA)  # fmt: skip
                group_of = np.searchsorted(layout.starts, picked_positions, side="right") - 1
                cuts = np.concatenate([[0], np.flatnonzero(np.diff(group_of)) + 1, [len(group_of)]])
                for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
                    g = int(group_of[a])
                    if g not in writers:
                        sink = pa.OSFile(os.path.join(spill, f"{g}.arrow"), "wb")
                        writers[g] = (sink, pa.ipc.new_stream(sink, _SPILL_SCHEMA))
                    writers[g][1].write_table(picked.slice(a, b - a))
    finally:
        for sink, writer in writers.values():
            writer.close()
            sink.close()


def source_documents(name: str, shards: list[str]) -> SourceDocuments:
    """What the planner needs of one source, read shard by shard: split units and lengths (not ids, not tokens)."""
    total = sum(shard_row_count(s) for s in shards)  # filled in place: no second copy while concatenating
    units, lengths = np.empty(total, np.float64), np.empty(total, np.int64)
    for first, table in iter_source_tables(shards):
        if first + table.num_rows > total:
            raise ShardError(f"source {name!r}: its shards hold more rows than their footers say ({total})")
        units[first : first + table.num_rows] = split_units(name, table.column("id").to_pylist())
        lengths[first : first + table.num_rows] = document_lengths(table.column("tokens"))
    return SourceDocuments(name, units, lengths)
