"""Write a planned mixture split without holding the sources or the plan in memory.

The split's order is a local file of ORDERED rows (mixture_order); output shard k holds its rows
[k * S, (k + 1) * S) (S: the recipe's documents_per_shard), cut into row groups of about
shards.ROW_GROUP_TOKENS tokens by row_group_bounds' rule (split_layout, streamed over the file). The rows
reach their row groups by an external shuffle that reads each input row group once (mixture_shuffle);
memory: `chunk` (recipe.plan_memory_documents) order rows, one input and one output row group. The shards
have the same bytes as write_shard of the rows taken from all sources in memory.
"""

from __future__ import annotations

import os
import posixpath
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from marin_assets.tokenize import shards as shard_files
from marin_assets.tokenize.mixture_keys import DOCUMENT_RECORD, DocumentFile, document_hashes
from marin_assets.tokenize.mixture_order import ORDERED, iter_ordered_lengths
from marin_assets.tokenize.mixture_shuffle import check_schema, output_groups
from marin_assets.tokenize.shards import (
    SHARD_PATTERN, ShardWriter, document_lengths, iter_row_groups, shard_table, write_shard,
)


def iter_source_tables(shards: list[str]) -> Iterator[tuple[int, pa.Table]]:
    """(index of its first document, table) for each row group of each shard of one source, in order."""
    first = 0
    for path in shards:
        for table in iter_row_groups(path):
            check_schema(path, table)
            yield first, table
            first += table.num_rows


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
    writer = None
    with tempfile.TemporaryDirectory(prefix="marin-mixture-spill-") as spill:
        try:
            for g, table in output_groups(path, total, source_shards, layout.starts, chunk, spill):
                k = layout.shard_of[g]
                if writer is None or writer[0] != k:
                    if writer is not None:
                        writer[1].close()
                    writer = (k, ShardWriter(posixpath.join(folder, SHARD_PATTERN.format(k)), tokenizer_hash).open())
                columns = (table.column(name).combine_chunks() for name in ("id", "source", "tokens"))
                writer[1].write_group(shard_table(*columns, tokenizer_hash))
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
