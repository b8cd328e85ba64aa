"""The streaming mixture writer gives the shards of taking the rows from all sources in memory."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

from marin_assets.tokenize.mixture_plan import split_units
from marin_assets.tokenize.mixture_keys import units
from marin_assets.tokenize.mixture_stream import index_source, write_split
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


def _lengths(tmp_path, name, paths):
    return index_source(name, paths, str(tmp_path / f"{name}.bin")).chunks(10**6).__next__()[2]


@pytest.mark.parametrize(("rows_per_shard", "group_tokens", "open_spills", "chunk"),
                         [(7, None, 256, 2**20), (64, None, 256, 2**20), (1000, None, 256, 2**20),
                          (64, 100, 256, 2**20), (64, 100, 3, 2**20), (1000, 37, 2, 2**20), (7, None, 256, 5),
                          (64, 100, 256, 9), (1000, 37, 256, 1)])  # fmt: skip
def test_streamed_shards_equal_the_in_memory_ones(tmp_path, monkeypatch, rows_per_shard, group_tokens, open_spills,
                                                  chunk):
    """Also with small row groups (several per shard, and a document longer than a group), few spill files
    open at once and small windows (several passes over the inputs)."""
    import fsspec
    import pyarrow.parquet as pq

    from marin_assets.tokenize import mixture_shuffle, shards

    if group_tokens:
        monkeypatch.setattr(shards, "ROW_GROUP_TOKENS", group_tokens)
    monkeypatch.setattr(mixture_shuffle, "MAX_OPEN_SPILLS", open_spills)
    sources = [_source(tmp_path, "a", 90, 25, 0), _source(tmp_path, "b", 40, 40, 1), _source(tmp_path, "c", 13, 5, 2)]
    lengths = [_lengths(tmp_path, name, paths) for name, paths in zip("abc", sources)]
    rng = np.random.default_rng(3)
    # repeats (upsampling) and skipped documents, in a shuffled order, as the planner makes them
    rows = np.concatenate([np.column_stack([np.full(n, s), rng.integers(0, size, n)])
                           for s, (size, n) in enumerate([(90, 60), (40, 100), (13, 30)])])  # fmt: skip
    rows = rows[rng.permutation(len(rows))]
    fs = fsspec.filesystem("file")
    n = write_split(rows, sources, lengths, str(tmp_path / "streamed"), rows_per_shard, "h", fs, write_empty=True,
                    chunk=chunk)  # fmt: skip
    _in_memory(rows, sources, str(tmp_path / "memory"), rows_per_shard)
    assert n == -(-len(rows) // rows_per_shard)
    assert _files(tmp_path / "streamed") == _files(tmp_path / "memory")
    streamed = sorted(os.listdir(tmp_path / "streamed"))
    groups = [pq.ParquetFile(tmp_path / "streamed" / f).num_row_groups for f in streamed]
    assert max(groups) > 1 if group_tokens else set(groups) == {1}
    documents = index_source("a", sources[0], str(tmp_path / "a-again.bin"))
    (_, hashes, lengths_a), = documents.chunks(1000)
    # the split value of each id, read shard by shard
    assert np.array_equal(units(hashes), split_units("a", [f"a-{i:04d}" for i in range(90)]))
    assert documents.size == lengths_a.size == 90 and lengths_a.min() >= 1


def test_an_empty_train_split_is_one_empty_shard(tmp_path):
    import fsspec

    n = write_split(np.zeros((0, 2), np.int64), [], [], str(tmp_path / "t"), 10, "h", fsspec.filesystem("file"), True)
    assert n == 1 and read_shards([str(tmp_path / "t" / SHARD_PATTERN.format(0))]).num_rows == 0


def test_row_groups_hold_about_group_tokens_and_a_long_document_stands_alone():
    from marin_assets.tokenize.shards import row_group_bounds

    lengths = np.array([3, 3, 3, 10, 1, 1, 2, 25, 1])
    bounds = row_group_bounds(lengths, group_tokens=8)
    # tokens before each row: 0 3 6 9 19 20 21 23 48 -> groups 0 0 0 1 2 2 2 2 6
    assert bounds.tolist() == [0, 3, 4, 8, 9]
    assert row_group_bounds(np.array([], np.int64)).tolist() == [0, 0]
    assert row_group_bounds(lengths).tolist() == [0, 9]  # the shipped bound: one group


def test_a_plan_row_outside_its_source_is_refused(tmp_path):
    import fsspec

    sources = [_source(tmp_path, "a", 10, 5, 0)]
    rows = np.array([[0, 3], [0, 10]])
    with pytest.raises(ValueError, match="outside its 10 documents"):
        write_split(rows, sources, [np.full(10, 5)], str(tmp_path / "t"), 10, "h", fsspec.filesystem("file"), True)


@pytest.mark.parametrize("chunk", [1, 5, 2**20])
def test_each_input_row_group_is_read_once_whatever_the_memory_bound(tmp_path, monkeypatch, chunk):
    """Linear cost: the shuffle reads every input row group once, not once per window of `chunk` rows
    (which made 1M documents cost 2.6x per document what 100k did)."""
    import fsspec

    from marin_assets.tokenize import mixture_shuffle, shards

    monkeypatch.setattr(shards, "ROW_GROUP_TOKENS", 50)
    sources = [_source(tmp_path, "a", 90, 25, 0), _source(tmp_path, "b", 40, 40, 1)]
    lengths = [_lengths(tmp_path, name, paths) for name, paths in zip("ab", sources)]
    rng = np.random.default_rng(5)
    rows = np.concatenate([np.column_stack([np.full(n, s), rng.integers(0, size, n)])
                           for s, (size, n) in enumerate([(90, 150), (40, 80)])])  # fmt: skip
    rows = rows[rng.permutation(len(rows))]
    reads: dict = {}
    original = mixture_shuffle._row_group

    def counted(opened, path, group):
        reads[(path, group)] = reads.get((path, group), 0) + 1
        return original(opened, path, group)

    monkeypatch.setattr(mixture_shuffle, "_row_group", counted)
    write_split(rows, sources, lengths, str(tmp_path / "out"), 64, "h", fsspec.filesystem("file"), True, chunk=chunk)
    _in_memory(rows, sources, str(tmp_path / "memory"), 64)
    assert _files(tmp_path / "out") == _files(tmp_path / "memory")
    import pyarrow.parquet as pq

    every_group = {(path, g) for paths in sources for path in paths for g in range(pq.ParquetFile(path).num_row_groups)}
    assert len(every_group) > 10 and set(reads) <= every_group and set(reads.values()) == {1}


def test_consecutive_ranges_fill_to_the_limit_and_an_oversized_entry_stands_alone():
    from marin_assets.tokenize.mixture_order import consecutive_ranges, runs

    assert consecutive_ranges(np.array([3, 4, 3, 1, 0, 12, 0, 5]), 10).tolist() == [0, 0, 0, 1, 1, 2, 3, 3]
    assert consecutive_ranges(np.array([10, 0, 5]), 10).tolist() == [0, 0, 1]
    assert consecutive_ranges(np.array([0, 0]), 10).tolist() == [0, 0]
    assert runs(np.array([2, 2, 5, 5, 5, 1])) == [(0, 2), (2, 5), (5, 6)] and runs(np.array([])) == []
