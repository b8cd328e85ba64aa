"""Cleaned Parquet files are cut into row groups of bounded bytes, so a reader's memory does not grow with a file."""

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from marin_assets.data.spark.parquet_output import row_group_rows, value_bytes, write_arrow_table


def test_row_groups_hold_about_the_target_bytes_and_the_rows_read_back_whole(tmp_path):
    texts = [("word " * (50 + i % 400)).strip() for i in range(5_000)]
    table = pa.table({"id": [f"d{i:05d}" for i in range(5_000)], "text": texts})
    target = 1 << 20
    rows = row_group_rows(table, target)
    assert 1 <= rows < table.num_rows
    per_row = value_bytes(table) / table.num_rows
    assert abs(rows * per_row - target) <= per_row
    uri = str(tmp_path / "part.parquet")
    write_arrow_table(table, uri)
    meta = pq.ParquetFile(uri).metadata
    assert meta.num_row_groups == -(-table.num_rows // row_group_rows(table))
    assert pq.read_table(uri).equals(table)


def test_small_and_empty_tables_are_one_row_group():
    small = pa.table({"id": ["a", "b"], "text": ["x", "y"]})
    assert row_group_rows(small) == 2
    assert row_group_rows(small.slice(0, 0)) == 1


def test_each_write_task_holds_exactly_one_file(spark, tmp_path):
    # file i's rows are partition i's: no task writes two files while another writes none
    from marin_assets.data.spark.parquet_output import _BUCKET, bucketed, part_name, write_parquet

    df = spark.createDataFrame([(f"doc-{i}", "x" * (i % 7)) for i in range(2_000)], "id string, text string")
    for n_files in (2, 3, 4, 8):
        parts = bucketed(df, n_files, "id").rdd.mapPartitionsWithIndex(
            lambda index, rows: [(index, sorted({row[_BUCKET] for row in rows}))]
        ).collect()
        assert sorted(parts) == [(i, [i]) for i in range(n_files)], n_files
    schema = pa.schema([("id", pa.string()), ("text", pa.string())])
    assert write_parquet(df, schema, str(tmp_path / "out"), 3, "id", ["id"]) == 2_000
    tables = [pq.read_table(tmp_path / "out" / part_name(i)) for i in range(3)]
    assert sum(t.num_rows for t in tables) == 2_000 and all(t.num_rows > 500 for t in tables)
    assert all(t["id"].to_pylist() == sorted(t["id"].to_pylist()) for t in tables)


def test_a_write_task_given_two_files_rows_fails_instead_of_writing_both(tmp_path):
    import pytest

    from marin_assets.data.spark.parquet_output import _BUCKET, _bucket_writer

    schema = pa.schema([("id", pa.string())])
    write = _bucket_writer(schema, str(tmp_path), ["id"])
    one = pa.RecordBatch.from_pydict({"id": ["a", "b"], _BUCKET: pa.array([1, 1], pa.int32())})
    assert next(write(iter([one]))).to_pydict() == {"bucket": [1], "rows": [2]}
    mixed = pa.RecordBatch.from_pydict({"id": ["c"], _BUCKET: pa.array([2], pa.int32())})
    with pytest.raises(ValueError, match=r"files \[1, 2\]"):
        next(write(iter([one, mixed])))


def _texts_table(n: int) -> pa.Table:
    texts = [("word " * (50 + (i * 7919) % 400)).strip() + ("" if i % 9 else " é") for i in range(n)]
    return pa.table({"id": [f"d{(i * 7919) % n:05d}" for i in range(n)], "text": texts,
                     "score": [None if i % 5 == 0 else i / 3 for i in range(n)]})  # fmt: skip


def test_a_sorted_file_is_written_a_row_group_at_a_time_with_the_bytes_of_a_whole_sorted_write(tmp_path, monkeypatch):
    """The file equals sorting the whole table and writing it at once (what the writer did before), and it
    does not depend on how the rows arrived in batches (the row group size is counted from values)."""
    from marin_assets.data.spark import parquet_output
    from marin_assets.data.spark.parquet_output import value_bytes

    table = _texts_table(5_000)
    monkeypatch.setattr(parquet_output, "ROW_GROUP_BYTES", 1 << 20)  # several row groups
    write_arrow_table(table, str(tmp_path / "new.parquet"), ["id"])
    rechunked = pa.Table.from_batches(table.to_batches(max_chunksize=333))
    write_arrow_table(rechunked, str(tmp_path / "rechunked.parquet"), ["id"])
    rows = row_group_rows(table)
    assert 1 < -(-table.num_rows // rows) == pq.ParquetFile(tmp_path / "new.parquet").metadata.num_row_groups
    assert value_bytes(rechunked) == value_bytes(table) and rechunked.nbytes != table.nbytes
    pq.write_table(table.sort_by([("id", "ascending")]).combine_chunks(), tmp_path / "whole.parquet",
                   compression="zstd", write_statistics=True, row_group_size=rows)  # fmt: skip
    new = (tmp_path / "new.parquet").read_bytes()
    assert new == (tmp_path / "whole.parquet").read_bytes() == (tmp_path / "rechunked.parquet").read_bytes()
    assert pq.read_table(tmp_path / "new.parquet").equals(table.sort_by([("id", "ascending")]))


def test_take_rows_equals_take_across_chunks_and_copies_only_the_rows_taken():
    import numpy as np

    from marin_assets.data.spark.parquet_output import take_rows

    table = _texts_table(3_000)
    chunked = pa.Table.from_batches(table.to_batches(max_chunksize=700))
    rng = np.random.default_rng(0)
    for indices in (rng.integers(0, 3_000, 500), np.arange(2_999, -1, -7), np.array([], dtype=np.int64),
                    np.array([5, 5, 2_100, 5])):  # fmt: skip
        assert take_rows(chunked, indices).equals(table.take(indices)), indices[:5]
    # peak bytes allocated for taking 100 rows; each pool outlives the buffers it gave out
    ours, theirs = pa.proxy_memory_pool(pa.default_memory_pool()), pa.proxy_memory_pool(pa.default_memory_pool())
    taken = take_rows(chunked, np.arange(100), memory_pool=ours)
    joined = pc.take(chunked, np.arange(100), memory_pool=theirs)  # pyarrow's own take joins the chunks first
    assert taken.equals(joined)
    assert ours.max_memory() <= 3 * taken.nbytes < chunked.nbytes <= theirs.max_memory()
    del taken, joined
