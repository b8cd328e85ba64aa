"""Cleaned Parquet files are cut into row groups of bounded bytes, so a reader's memory does not grow with a file."""

import pyarrow as pa
import pyarrow.parquet as pq

from marin_assets.data.parquet_output import row_group_rows, write_arrow_table


def test_row_groups_hold_about_the_target_bytes_and_the_rows_read_back_whole(tmp_path):
    texts = [("word " * (50 + i % 400)).strip() for i in range(5_000)]
    table = pa.table({"id": [f"d{i:05d}" for i in range(5_000)], "text": texts})
    target = 1 << 20
    rows = row_group_rows(table, target)
    assert 1 <= rows < table.num_rows
    assert abs(rows * table.nbytes / table.num_rows - target) <= table.nbytes / table.num_rows
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
    from marin_assets.data.parquet_output import _BUCKET, bucketed, part_name, write_parquet

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

    from marin_assets.data.parquet_output import _BUCKET, _bucket_writer

    schema = pa.schema([("id", pa.string())])
    write = _bucket_writer(schema, str(tmp_path), ["id"])
    one = pa.RecordBatch.from_pydict({"id": ["a", "b"], _BUCKET: pa.array([1, 1], pa.int32())})
    assert next(write(iter([one]))).to_pydict() == {"bucket": [1], "rows": [2]}
    mixed = pa.RecordBatch.from_pydict({"id": ["c"], _BUCKET: pa.array([2], pa.int32())})
    with pytest.raises(ValueError, match=r"files \[1, 2\]"):
        next(write(iter([one, mixed])))
