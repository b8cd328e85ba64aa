"""Deterministic Parquet output from Spark: same rows in -> byte-identical files out.

Rows go to a fixed number of files by a hash of their key (not by Spark's scheduling): the hash
Spark's own hash partitioning uses, so file i's rows are exactly partition i's and every task writes
one file (another hash would send several files to one task and none to others). Each task writes
its file with pyarrow (sorted, fixed names part-00000.parquet..., no timestamps), straight to the
storage URI, so the data never funnels through the driver.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

import fsspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

_BUCKET = "_bucket"
# Readers decode a whole row group's column chunk at once (the tokenizer's sample, a tokenize task's
# rows): row groups of about this many bytes keep their memory bounded however large a file grows.
ROW_GROUP_BYTES = 32 * 2**20


def part_name(index: int) -> str:
    return f"part-{index:05d}.parquet"


def row_group_rows(table: pa.Table, target_bytes: int = ROW_GROUP_BYTES) -> int:
    """Rows per row group so that one holds about target_bytes of the table (a function of the table alone)."""
    if table.num_rows == 0:
        return 1
    return max(1, min(table.num_rows, target_bytes * table.num_rows // max(table.nbytes, 1)))


def write_arrow_table(table: pa.Table, uri: str) -> None:
    with fsspec.open(uri, "wb") as f:
        pq.write_table(table, f, compression="zstd", write_statistics=True, row_group_size=row_group_rows(table))


def _bucket_writer(schema: pa.Schema, out_dir: str, sort_keys: list[str]):
    """mapInArrow body over `bucketed`'s partitions: a partition's rows are all one file's (checked)."""

    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        bucket, parts = None, []
        for batch in batches:
            if not batch.num_rows:
                continue
            low_high = pc.min_max(batch.column(_BUCKET))
            low, high = low_high["min"].as_py(), low_high["max"].as_py()
            bucket = low if bucket is None else bucket
            if low != bucket or high != bucket:
                raise ValueError(f"one write task got rows of files {sorted({bucket, low, high})}: "
                                 "rows must be partitioned by bucketed()")  # fmt: skip
            parts.extend(pa.Table.from_batches([batch]).select(schema.names).cast(schema).to_batches())
        buckets, rows = [], []
        if bucket is not None:
            table = pa.Table.from_batches(parts, schema=schema).sort_by([(k, "ascending") for k in sort_keys])
            write_arrow_table(table.combine_chunks(), posixpath.join(out_dir, part_name(bucket)))
            buckets.append(bucket)
            rows.append(table.num_rows)
        yield pa.RecordBatch.from_pydict({"bucket": buckets, "rows": rows},
                                         schema=pa.schema([("bucket", pa.int32()), ("rows", pa.int64())]))

    return write


def bucketed(df, n_files: int, key: str):
    """df with each row's file index (_BUCKET), in n_files partitions where partition i holds file i's rows.

    repartition(n, key) sends a row to pmod(murmur3(key), n), which is Spark's hash(key): the same value.
    """
    from pyspark.sql import functions as F

    return df.withColumn(_BUCKET, F.pmod(F.hash(key), F.lit(n_files)).cast("int")).repartition(n_files, key)


def write_parquet(df, schema: pa.Schema, out_dir: str, n_files: int, key: str, sort_keys: list[str]) -> int:
    """Write Spark DataFrame `df` (columns ⊇ schema.names) as n_files Parquet files; returns rows written."""
    fsspec.core.url_to_fs(out_dir)[0].makedirs(out_dir, exist_ok=True)
    written = (
        bucketed(df, n_files, key)
        .mapInArrow(_bucket_writer(schema, out_dir, sort_keys), "bucket int, rows long")
        .collect()
    )
    done = {r["bucket"] for r in written}
    for bucket in range(n_files):  # every file exists, even when no row hashed to it
        if bucket not in done:
            write_arrow_table(schema.empty_table(), posixpath.join(out_dir, part_name(bucket)))
    return sum(r["rows"] for r in written)
