"""Write a planned mixture split without holding the sources or the plan in memory: an external shuffle.

The split's order is a local file of ORDERED rows (mixture_order); output shard k holds its rows
[k * S, (k + 1) * S) (S: the recipe's documents_per_shard), cut into row groups of about
shards.ROW_GROUP_TOKENS tokens by row_group_bounds' rule (split_layout, streamed over the file). The rows
are written in windows of at most `chunk` rows (recipe.plan_memory_documents) touching at most
MAX_OPEN_SPILLS output row groups: a window's rows are read from the order file, the input row groups
holding its documents are read (the others are skipped by their footers' row counts) and each wanted row
goes to a spill file of its output row group; each row group whose rows have all arrived is put in order
from its spill files and written to its shard. Memory: a window's rows, one input and one output row
group. The shards have the same bytes as write_shard of the rows taken from all sources in memory.
"""

from __future__ import annotations

import os
import posixpath
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from marin_assets.core.schemas import TOKENIZED_SCHEMA
from marin_assets.tokenize import shards as shard_files
from marin_assets.tokenize.mixture_keys import DOCUMENT_RECORD, DocumentFile, document_hashes
from marin_assets.tokenize.mixture_order import ORDERED, iter_ordered_lengths, read_ordered
from marin_assets.tokenize.shards import (
    SHARD_PATTERN, ShardError, ShardWriter, document_lengths, iter_row_groups, shard_table, write_shard,
)

POSITION = "_position"
_SPILL_SCHEMA = TOKENIZED_SCHEMA.append(pa.field(POSITION, pa.int64(), nullable=False))
MAX_OPEN_SPILLS = 256  # spill files open at once; more output row groups than this take another input pass


def iter_source_tables(shards: list[str]) -> Iterator[tuple[int, pa.Table]]:
    """(index of its first document, table) for each row group of each shard of one source, in order."""
    first = 0
    for path in shards:
        for table in iter_row_groups(path):
            _check_schema(path, table)
            yield first, table
            first += table.num_rows


def _check_schema(path: str, table: pa.Table) -> None:
    if not table.schema.equals(TOKENIZED_SCHEMA):
        raise ShardError(f"{path}: schema {table.schema} is not TOKENIZED_SCHEMA")


def index_source(name: str, shards: list[str], path: str) -> DocumentFile:
    """What the planner needs of one source, read row group by row group into a local file: per document
    its hash of (source, id) and its length (not its id, not its tokens)."""
    size = 0
    with open(path, "wb") as out:
        for first, table in iter_source_tables(shards):
            records = np.empty(table.num_rows, DOCUMENT_RECORD)
            records["hash"] = document_hashes(name, table.column("id").to_pylist())
            records["length"] = document_lengths(table.column("tokens"))
            records.tofile(out)
            size = first + table.num_rows
    return DocumentFile(name, path, size)


@dataclass(frozen=True)
class SplitLayout:
    """Output row group g holds split rows [starts[g], starts[g + 1]) and belongs to shard shard_of[g]
    (one entry a row group, not a document)."""

    starts: np.ndarray
    shard_of: list[int]


def split_layout(path: str, total: int, rows_per_shard: int, chunk: int) -> SplitLayout:
    """Row groups of every output shard: row_group_bounds' rule (a row goes to group (tokens before it in its
    shard) // ROW_GROUP_TOKENS), carried across chunks of the order file."""
    group_tokens, starts, shard_of = shard_files.ROW_GROUP_TOKENS, [], []
    position, in_shard, last_group = 0, 0, -1
    for lengths in iter_ordered_lengths(path, total, chunk):
        a = 0
        while a < lengths.size:
            shard, offset = divmod(position, rows_per_shard)
            if offset == 0:
                in_shard, last_group = 0, -1
            part = lengths[a : a + rows_per_shard - offset]
            group = (in_shard + np.cumsum(part) - part) // group_tokens
            new = np.flatnonzero(np.diff(group, prepend=last_group))
            starts.extend((position + new).tolist())
            shard_of.extend([shard] * new.size)
            in_shard, last_group = in_shard + int(part.sum()), int(group[-1])
            position, a = position + part.size, a + part.size
    return SplitLayout(np.asarray([*starts, total], np.int64), shard_of)


def write_ordered(path: str, total: int, source_shards: list[list[str]], folder: str, rows_per_shard: int,
                  tokenizer_hash: str, fs, write_empty: bool, chunk: int) -> int:
    """Write the rows of the order file at path as folder/shard-NNNNN.parquet; the number of shards."""
    fs.makedirs(folder, exist_ok=True)
    if total == 0:
        if write_empty:
            write_shard(shard_table([], [], pa.array([], pa.list_(pa.int32())), tokenizer_hash),
                        posixpath.join(folder, SHARD_PATTERN.format(0)))  # fmt: skip
        return int(write_empty)
    layout = split_layout(path, total, rows_per_shard, chunk)
    groups, writer, footers = len(layout.shard_of), None, [_row_groups(s) for s in source_shards]
    parts: dict[int, list[str]] = {}  # spill files of output row groups not yet written
    with tempfile.TemporaryDirectory(prefix="marin-mixture-spill-") as spill:
        try:
            start, done = 0, 0  # window: rows [start, stop); groups [0, done) are written
            while start < total:
                first = int(np.searchsorted(layout.starts, start, side="right")) - 1
                stop = min(total, start + chunk, int(layout.starts[min(groups, first + MAX_OPEN_SPILLS)]))
                _spill(read_ordered(path, start, stop), start, footers, layout, spill, parts)
                start = stop
                while done < groups and layout.starts[done + 1] <= stop:  # complete groups, in order
                    k = layout.shard_of[done]
                    if writer is None or writer[0] != k:
                        if writer is not None:
                            writer[1].close()
                        shard = posixpath.join(folder, SHARD_PATTERN.format(k))
                        writer = (k, ShardWriter(shard, tokenizer_hash).open())
                    writer[1].write_group(_spilled_group(parts.pop(done, []), done, layout, tokenizer_hash))
                    done += 1
        finally:
            if writer is not None:
                writer[1].close()
    return layout.shard_of[-1] + 1


def write_split(rows: np.ndarray, source_shards: list[list[str]], source_lengths: list[np.ndarray], folder: str,
                rows_per_shard: int, tokenizer_hash: str, fs, write_empty: bool, chunk: int = 2**20) -> int:
    """write_ordered of rows held in memory ((source index, document index) in order; small splits, tests)."""
    rows = np.asarray(rows).reshape(-1, 2)
    ordered = np.empty(len(rows), ORDERED)
    ordered["source"], ordered["document"] = rows[:, 0], rows[:, 1]
    for s, lengths in enumerate(source_lengths):
        mine = rows[:, 0] == s
        if mine.any() and (rows[mine, 1].min() < 0 or rows[mine, 1].max() >= lengths.size):
            raise ValueError(f"plan rows name documents of source {s} outside its {lengths.size} documents")
        ordered["length"][mine] = lengths[rows[mine, 1]]
    with tempfile.TemporaryDirectory(prefix="marin-mixture-order-") as work:
        path = os.path.join(work, "order.bin")
        ordered.tofile(path)
        return write_ordered(path, len(rows), source_shards, folder, rows_per_shard, tokenizer_hash, fs,
                             write_empty, chunk)  # fmt: skip


def _row_groups(shards: list[str]) -> list[tuple[str, list[tuple[int, int, int]]]]:
    """Per shard of a source: its (row group, first document, rows), from the footers."""
    out, first = [], 0
    for path in shards:
        with fsspec.open(path, "rb") as f:
            metadata = pq.ParquetFile(f).metadata
        groups = []
        for g in range(metadata.num_row_groups):
            groups.append((g, first, metadata.row_group(g).num_rows))
            first += groups[-1][2]
        out.append((path, groups))
    return out


def _spilled_group(paths: list[str], g: int, layout: SplitLayout, tokenizer_hash: str) -> pa.Table:
    """Output row group g from its spill files, in split order (the files are removed)."""
    if not paths:
        raise RuntimeError(f"mixture row group {g}: no spilled rows arrived for its positions")
    tables = []
    for path in paths:
        with pa.OSFile(path) as source:
            tables.append(pa.ipc.open_stream(source).read_all())
        os.remove(path)
    table = pa.concat_tables(tables).sort_by(POSITION)
    position, (lo, hi) = table.column(POSITION), layout.starts[g : g + 2].tolist()
    # Arrow compute, not a numpy range: a row group can hold a million one-token documents
    if table.num_rows != hi - lo or pc.count_distinct(position).as_py() != hi - lo or \
            pc.min(position).as_py() != lo or pc.max(position).as_py() != hi - 1:
        raise RuntimeError(f"mixture row group {g}: spilled rows do not cover its positions")
    return shard_table(table.column("id").combine_chunks(), table.column("source").combine_chunks(),
                       table.column("tokens").combine_chunks(), tokenizer_hash)  # fmt: skip


def _spill(rows: np.ndarray, first_position: int, footers: list, layout: SplitLayout, spill: str,
           parts: dict[int, list[str]]) -> None:
    """Every row of a window (rows: its ORDERED rows, the first at first_position) to a new spill file of its
    output row group (parts: each group's spill files)."""
    writers = {}
    try:
        for s, source_groups in enumerate(footers):
            # this source's positions sorted by document (ties stay in order): an input row group's rows are
            # one searchsorted slice
            positions = np.flatnonzero(rows["source"] == s)
            if positions.size == 0:
                continue  # none of this window's rows: its shards are not read
            by_document = np.argsort(rows["document"][positions], kind="stable")
            positions = positions[by_document] + first_position
            documents = rows["document"][positions - first_position]
            del by_document
            for path, groups in source_groups:
                wanted = [(g, first, n, *np.searchsorted(documents, [first, first + n])) for g, first, n in groups]
                wanted = [w for w in wanted if w[3] < w[4]]
                if not wanted:
                    continue
                with fsspec.open(path, "rb") as f:
                    parquet = pq.ParquetFile(f)
                    for g, first, _, lo, hi in wanted:
                        table = parquet.read_row_group(g).replace_schema_metadata(None)
                        _check_schema(path, table)
                        by_position = np.argsort(positions[lo:hi], kind="stable")
                        picked_positions = positions[lo:hi][by_position]
                        picked = table.take(pa.array(documents[lo:hi][by_position] - first))
                        picked = pa.Table.from_arrays([*picked.columns, pa.array(picked_positions, pa.int64())],
                                                      schema=_SPILL_SCHEMA)  # fmt: skip
                        _to_spill_files(picked, picked_positions, first_position, layout, spill, writers, parts)
            if documents.size and documents[-1] >= sum(n for _, gs in source_groups for _, _, n in gs):
                raise ShardError(f"source {s}: the plan names a document beyond its shards' rows")
    finally:
        for sink, writer in writers.values():
            writer.close()
            sink.close()


def _to_spill_files(picked: pa.Table, positions: np.ndarray, window: int, layout: SplitLayout, spill: str,
                    writers: dict, parts: dict[int, list[str]]) -> None:
    group_of = np.searchsorted(layout.starts, positions, side="right") - 1
    cuts = np.concatenate([[0], np.flatnonzero(np.diff(group_of)) + 1, [len(group_of)]])
    for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        g = int(group_of[a])
        if g not in writers:
            parts.setdefault(g, []).append(os.path.join(spill, f"{g}-{window}.arrow"))
            sink = pa.OSFile(parts[g][-1], "wb")
            writers[g] = (sink, pa.ipc.new_stream(sink, _SPILL_SCHEMA))
        writers[g][1].write_table(picked.slice(a, b - a))
