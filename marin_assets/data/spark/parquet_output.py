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
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from marin_assets.core.storage import naming_the_path

_BUCKET = "_bucket"
# Readers decode a whole row group's column chunk at once (the tokenizer's sample, a tokenize task's
# rows): row groups of about this many bytes keep their memory bounded however large a file grows.
ROW_GROUP_BYTES = 32 * 2**20


def part_name(index: int) -> str:
    return f"part-{index:05d}.parquet"


def row_group_rows(table: pa.Table, target_bytes: int | None = None) -> int:
    """Rows per row group so that one holds about target_bytes of the table's values.

    Values, not buffers: a table's nbytes counts each chunk's offsets and validity bitmap, so it
    would depend on how the rows arrived in batches, and the file's bytes with it.
    """
    if table.num_rows == 0:
        return 1
    target_bytes = ROW_GROUP_BYTES if target_bytes is None else target_bytes
    return max(1, min(table.num_rows, target_bytes * table.num_rows // max(value_bytes(table), 1)))


def value_bytes(table: pa.Table) -> int:
    """The bytes of the table's values: strings and binaries by length, fixed-width types by width,
    nested types by their buffers (chunking changes those a little)."""
    total = 0
    for column in table.columns:
        kind = column.type
        if pa.types.is_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_string(kind) or (
                pa.types.is_large_binary(kind)):  # fmt: skip
            total += pc.sum(pc.binary_length(column)).as_py() or 0
        elif pa.types.is_null(kind):
            continue
        elif pa.types.is_primitive(kind):  # numbers, booleans, dates and times: fixed width
            total += kind.bit_width * len(column) // 8
        else:
            total += column.nbytes
    return total


def write_arrow_table(table: pa.Table, uri: str, sort_keys: list[str] | None = None) -> None:
    """Write `table` (sorted by sort_keys) as one Parquet file, a row group at a time.

    Only the sort indices and one row group are ever copied: a write task holding a file's rows does
    not make a second, sorted copy of them all (fresh memory costs, and a VM may charge page faults).
    """
    rows = row_group_rows(table)
    order = pc.sort_indices(table, sort_keys=[(k, "ascending") for k in sort_keys]) if sort_keys else None
    # runs in Spark's Python workers: a full disk there must name the file, not just "Errno 28"
    with naming_the_path("writing", uri), fsspec.open(uri, "wb") as f, pq.ParquetWriter(f, table.schema, compression="zstd",
                                                       write_statistics=True) as writer:  # fmt: skip
        if table.num_rows == 0:
            writer.write_table(table, row_group_size=rows)
        for start in range(0, table.num_rows, rows):
            part = table.slice(start, rows) if order is None else take_rows(table, order[start : start + rows])
            writer.write_table(part.combine_chunks(), row_group_size=rows)


def take_rows(table: pa.Table, indices, memory_pool: pa.MemoryPool | None = None) -> pa.Table:
    """table.take(indices), copying only the rows taken: pyarrow's take on a table of several chunks
    first joins each column's chunks into one array (a copy of the whole table)."""
    batches = [b for b in table.to_batches() if b.num_rows]
    indices = np.asarray(indices, dtype=np.int64)
    if len(batches) <= 1:
        return pc.take(table, indices, memory_pool=memory_pool)
    starts = np.cumsum([0] + [b.num_rows for b in batches])
    chunk = np.searchsorted(starts, indices, side="right") - 1
    by_chunk = np.argsort(chunk, kind="stable")  # the rows grouped by chunk, in their order within it
    bounds = np.searchsorted(chunk[by_chunk], np.arange(len(batches) + 1))
    pieces = [pc.take(batches[c], indices[by_chunk[bounds[c] : bounds[c + 1]]] - starts[c], memory_pool=memory_pool)
              for c in range(len(batches)) if bounds[c] < bounds[c + 1]]  # fmt: skip
    grouped = pa.Table.from_batches(pieces, schema=table.schema).combine_chunks(memory_pool=memory_pool)
    return pc.take(grouped, np.argsort(by_chunk, kind="stable"), memory_pool=memory_pool)  # back to indices' order


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
            table = pa.Table.from_batches(parts, schema=schema)
            write_arrow_table(table, posixpath.join(out_dir, part_name(bucket)), sort_keys)
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
