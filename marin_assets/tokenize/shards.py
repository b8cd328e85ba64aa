"""Token shards: Parquet files of TOKENIZED_SCHEMA that MaxText's grain pipeline reads directly.

Every shard records the hash of the tokenizer that produced its ids in the Parquet key-value
metadata (TOKENIZER_HASH_KEY), so a mixture can refuse shards from different tokenizers.
Arrays are built from numpy offsets + values (building them from Python lists is slow).
"""

from __future__ import annotations

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from marin_assets.core.schemas import TOKENIZED_SCHEMA, TOKENIZER_HASH_KEY

SHARD_PATTERN = "shard-{:05d}.parquet"


class ShardError(ValueError):
    pass


def token_lists(offsets: np.ndarray, values: np.ndarray) -> pa.ListArray:
    """list<int32> array from int32 offsets (len = rows + 1) and int32 values."""
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(values, pa.int32()))


def shard_table(ids, sources, tokens: pa.ListArray, tokenizer_hash: str) -> pa.Table:
    schema = TOKENIZED_SCHEMA.with_metadata({TOKENIZER_HASH_KEY: tokenizer_hash.encode()})
    return pa.Table.from_arrays([pa.array(ids, pa.string()), pa.array(sources, pa.string()), tokens],
                                schema=schema)


def write_shard(table: pa.Table, uri: str) -> None:
    """Same table, same bytes: no timestamps, fixed writer settings. Local path or gs:// URI."""
    if table.schema.metadata is None or TOKENIZER_HASH_KEY not in table.schema.metadata:
        raise ShardError(f"refusing to write {uri}: the shard does not record its tokenizer hash")
    with fsspec.open(uri, "wb") as f:
        pq.write_table(table, f, compression="zstd")


def read_tokenizer_hash(uri: str) -> str | None:
    with fsspec.open(uri, "rb") as f:
        metadata = pq.read_schema(f).metadata or {}
    value = metadata.get(TOKENIZER_HASH_KEY)
    return value.decode() if value is not None else None


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
