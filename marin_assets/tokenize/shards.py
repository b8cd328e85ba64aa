"""Token shards: Parquet files of TOKENIZED_SCHEMA that MaxText's grain pipeline reads directly.

Every shard records the hash of the tokenizer that produced its ids in the Parquet key-value
metadata (TOKENIZER_HASH_KEY), so a mixture can refuse shards from different tokenizers.
Arrays are built from numpy offsets + values (building them from Python lists is slow).
"""

from __future__ import annotations

from collections.abc import Iterator

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from marin_assets.core.schemas import TOKENIZED_SCHEMA, TOKENIZER_HASH_KEY
from marin_assets.core.storage import naming_the_path

SHARD_PATTERN = "shard-{:05d}.parquet"
# A row group holds about this many token ids (4 MB): what a reader of a shard, or the mixture writer,
# decodes or holds at once, whatever the shard's documents_per_shard. At 4M tokens the mixture step's
# working memory was +160 MB over its start (Arrow take / sort / combine copies of a group, held by the
# allocator); at 1M, +70 MB (benchmarks/mixture_scale.py, 30k documents).
ROW_GROUP_TOKENS = 2**20


class ShardError(ValueError):
    pass


def token_lists(offsets: np.ndarray, values: np.ndarray) -> pa.ListArray:
    """list<int32> array from int32 offsets (len = rows + 1) and int32 values."""
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(values, pa.int32()))


def shard_table(ids, sources, tokens: pa.ListArray, tokenizer_hash: str) -> pa.Table:
    schema = TOKENIZED_SCHEMA.with_metadata({TOKENIZER_HASH_KEY: tokenizer_hash.encode()})
    return pa.Table.from_arrays([pa.array(ids, pa.string()), pa.array(sources, pa.string()), tokens],
                                schema=schema)


def row_group_bounds(lengths: np.ndarray, group_tokens: int | None = None) -> np.ndarray:
    """Row offsets [0, ..., n] of a shard's row groups, from its documents' token counts: a document goes
    to group (tokens before it) // group_tokens, empty groups dropped. A group holds at most group_tokens
    plus one document; any writer of the same rows cuts the same groups, so writes the same bytes."""
    if lengths.size == 0:
        return np.zeros(2, np.int64)
    before = np.cumsum(lengths) - lengths
    cuts = np.flatnonzero(np.diff(before // (group_tokens or ROW_GROUP_TOKENS))) + 1
    return np.concatenate([[0], cuts, [lengths.size]]).astype(np.int64)


class ShardWriter:
    """A shard written row group by row group (same settings as write_shard): with ShardWriter(uri, hash) as w."""

    def __init__(self, uri: str, tokenizer_hash: str):
        self.uri, self.schema = uri, TOKENIZED_SCHEMA.with_metadata({TOKENIZER_HASH_KEY: tokenizer_hash.encode()})

    def open(self) -> ShardWriter:
        with naming_the_path("writing", self.uri):  # in Spark's Python workers too: name the shard
            self._file = fsspec.open(self.uri, "wb").open()
            self._writer = pq.ParquetWriter(self._file, self.schema, compression="zstd")
        return self

    def close(self) -> None:
        with naming_the_path("writing", self.uri):
            self._writer.close()
            self._file.close()

    def __enter__(self) -> ShardWriter:
        return self.open()

    def write_group(self, table: pa.Table) -> None:
        """One row group (the caller cuts it with row_group_bounds)."""
        with naming_the_path("writing", self.uri):
            self._writer.write_table(table.replace_schema_metadata(self.schema.metadata),
                                     row_group_size=max(1, table.num_rows))

    def __exit__(self, *exc) -> None:
        self.close()


def write_shard(table: pa.Table, uri: str) -> None:
    """Same table, same bytes: no timestamps, fixed writer settings, row groups of row_group_bounds. Local path
    or gs:// URI."""
    metadata = table.schema.metadata
    if metadata is None or TOKENIZER_HASH_KEY not in metadata:
        raise ShardError(f"refusing to write {uri}: the shard does not record its tokenizer hash")
    bounds = row_group_bounds(document_lengths(table.column("tokens")))
    with ShardWriter(uri, metadata[TOKENIZER_HASH_KEY].decode()) as writer:
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            writer.write_group(table.slice(lo, hi - lo))


def read_tokenizer_hash(uri: str) -> str | None:
    with fsspec.open(uri, "rb") as f:
        metadata = pq.read_schema(f).metadata or {}
    value = metadata.get(TOKENIZER_HASH_KEY)
    return value.decode() if value is not None else None


def shard_row_count(uri: str) -> int:
    """Rows of a shard, from its Parquet footer (no data read)."""
    with fsspec.open(uri, "rb") as f:
        return pq.ParquetFile(f).metadata.num_rows


def iter_row_groups(uri: str) -> Iterator[pa.Table]:
    """A shard's row groups in order, tokenizer metadata dropped: one row group in memory at a time."""
    with fsspec.open(uri, "rb") as f:
        parquet = pq.ParquetFile(f)
        for group in range(parquet.num_row_groups):
            yield parquet.read_row_group(group).replace_schema_metadata(None)


def read_shard(uri: str) -> pa.Table:
    """One shard's rows, with the tokenizer metadata dropped (callers check it first)."""
    with fsspec.open(uri, "rb") as f:
        return pq.read_table(f).replace_schema_metadata(None)


def read_shards(paths: list[str]) -> pa.Table:
    """All rows of the shards, in order, with the tokenizer metadata dropped (callers check it first)."""
    if not paths:
        return TOKENIZED_SCHEMA.empty_table()
    tables = [read_shard(p) for p in paths]
    for path, table in zip(paths, tables, strict=True):
        if not table.schema.equals(TOKENIZED_SCHEMA):
            raise ShardError(f"{path}: schema {table.schema} is not TOKENIZED_SCHEMA")
    return pa.concat_tables(tables).combine_chunks()


def document_lengths(tokens: pa.ListArray | pa.ChunkedArray) -> np.ndarray:
    if isinstance(tokens, pa.ChunkedArray):
        tokens = tokens.combine_chunks() if tokens.num_chunks else pa.array([], pa.list_(pa.int32()))
    return np.diff(np.asarray(tokens.offsets)).astype(np.int64)


def histogram_rows(histogram: dict[str, int]) -> list[dict]:
    """A length_histogram() as rows with numeric bounds, smallest first (a table sorts them as numbers)."""
    rows = []
    for bucket, n in histogram.items():
        lo, hi = (0, int(bucket[2:])) if bucket.startswith("<=") else map(int, bucket.split("-"))
        rows.append({"tokens_from": lo, "tokens_to": hi, "documents": int(n)})
    return sorted(rows, key=lambda r: r["tokens_from"])


def length_histogram(lengths: np.ndarray) -> dict[str, int]:
    """Documents per token-count bucket, by powers of two: {"<=16": n, "17-32": n, ...}."""
    if lengths.size == 0:
        return {}
    edges = [0, 16]
    while edges[-1] < lengths.max():
        edges.append(edges[-1] * 2)
    counts, _ = np.histogram(lengths, bins=np.array(edges) + 0.5)
    out = {"<=16": int(np.sum(lengths <= 16))}
    for lo, hi, n in zip(edges[1:-1], edges[2:], counts[1:], strict=True):
        out[f"{lo + 1}-{hi}"] = int(n)
    return out
