"""The streaming mixture writer gives the shards of taking the rows from all sources in memory."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

from marin_assets.tokenize.mixture_plan import SourceDocuments
from marin_assets.tokenize.mixture_stream import source_documents, write_split
from marin_assets.tokenize.shards import SHARD_PATTERN, read_shards, shard_table, token_lists, write_shard


def _source(tmp_path, name: str, documents: int, shard_rows: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 30, documents)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    values = rng.integers(0, 500, int(lengths.sum())).astype(np.int32)
    table = shard_table([f"{name}-{i:04d}" for i in range(documents)], [name] * documents,
                        token_lists(offsets, values), "h")  # fmt: skip
    (tmp_path / name).mkdir()
    paths = []
    for k, start in enumerate(range(0, documents, shard_rows)):
        paths.append(str(tmp_path / name / SHARD_PATTERN.format(k)))
        write_shard(table.slice(start, shard_rows), paths[-1])
    return paths


def _in_memory(rows, sources, folder, rows_per_shard):
    """The previous builder: every source in one table, take the rows, cut shards."""
    tables = [read_shards(paths) for paths in sources]
    combined = pa.concat_tables(tables).combine_chunks()
    first = np.concatenate([[0], np.cumsum([t.num_rows for t in tables])[:-1]])
    taken = combined.take(first[rows[:, 0]] + rows[:, 1])
    os.makedirs(folder)
    for i, start in enumerate(range(0, max(taken.num_rows, 1), rows_per_shard)):
        part = taken.slice(start, rows_per_shard)
        write_shard(shard_table(part.column("id"), part.column("source"), part.column("tokens").combine_chunks(), "h"),
                    os.path.join(folder, SHARD_PATTERN.format(i)))  # fmt: skip


def _files(folder):
    return {p: open(os.path.join(folder, p), "rb").read() for p in sorted(os.listdir(folder))}


@pytest.mark.parametrize("rows_per_shard", [7, 64, 1000])
def test_streamed_shards_equal_the_in_memory_ones(tmp_path, rows_per_shard):
    import fsspec

    sources = [_source(tmp_path, "a", 90, 25, 0), _source(tmp_path, "b", 40, 40, 1), _source(tmp_path, "c", 13, 5, 2)]
    rng = np.random.default_rng(3)
    # repeats (upsampling) and skipped documents, in a shuffled order, as the planner makes them
    rows = np.concatenate([np.column_stack([np.full(n, s), rng.integers(0, size, n)])
                           for s, (size, n) in enumerate([(90, 60), (40, 100), (13, 30)])])  # fmt: skip
    rows = rows[rng.permutation(len(rows))]
    fs = fsspec.filesystem("file")
    n = write_split(rows, sources, str(tmp_path / "streamed"), rows_per_shard, "h", fs, write_empty=True)
    _in_memory(rows, sources, str(tmp_path / "memory"), rows_per_shard)
    assert n == -(-len(rows) // rows_per_shard)
    assert _files(tmp_path / "streamed") == _files(tmp_path / "memory")
    documents = source_documents("a", sources[0])
    expected = SourceDocuments.from_ids("a", [f"a-{i:04d}" for i in range(90)], documents.lengths)
    assert np.array_equal(documents.units, expected.units)  # the split value of each id, read shard by shard
    assert documents.lengths.size == 90 and documents.lengths.min() >= 1


def test_an_empty_train_split_is_one_empty_shard(tmp_path):
    import fsspec

    n = write_split(np.zeros((0, 2), np.int64), [], str(tmp_path / "t"), 10, "h", fsspec.filesystem("file"), True)
    assert n == 1 and read_shards([str(tmp_path / "t" / SHARD_PATTERN.format(0))]).num_rows == 0
