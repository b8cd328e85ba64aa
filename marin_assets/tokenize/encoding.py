"""Documents -> token ids as numpy offsets + values, in bounded chunks (one big call needs ~60x RAM)."""

from __future__ import annotations

import functools
import itertools
import os
from dataclasses import dataclass

import numpy as np
from tokenizers import Tokenizer

from marin_assets.tokenize.shards import shard_table, token_lists, write_shard
from marin_assets.tokenize.tokenizer_files import TOKENIZER_FILE, summarize_tokenizer


@dataclass(frozen=True)
class EncodeSettings:
    tokenizer_dir: str
    tokenizer_hash: str
    add_bos: bool
    add_eos: bool
    batch_documents: int


@functools.cache
def _load(tokenizer_dir: str, expected_hash: str) -> tuple[Tokenizer, int, int]:
    """Cached per (folder, hash): a folder rewritten by a new tokenizer is never served from the cache."""
    summary = summarize_tokenizer(tokenizer_dir)
    if summary.hash != expected_hash:
        raise ValueError(f"{tokenizer_dir} holds tokenizer {summary.hash[:12]}, not the expected {expected_hash[:12]}")
    return Tokenizer.from_file(os.path.join(tokenizer_dir, TOKENIZER_FILE)), summary.bos_id, summary.eos_id


def encode_documents(texts: list[str | None], settings: EncodeSettings) -> tuple[np.ndarray, np.ndarray]:
    """int32 offsets (len = documents + 1) and int32 values; a null text encodes like "" (BOS/EOS only)."""
    tok, bos_id, eos_id = _load(settings.tokenizer_dir, settings.tokenizer_hash)
    extra = int(settings.add_bos) + int(settings.add_eos)
    lengths_parts, value_parts = [], []
    for start in range(0, len(texts), settings.batch_documents):
        batch = [t or "" for t in texts[start:start + settings.batch_documents]]
        ids = [e.ids for e in tok.encode_batch_fast(batch, add_special_tokens=False)]
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        body = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int32, count=int(lengths.sum()))
        starts = np.concatenate([[0], np.cumsum(lengths + extra)[:-1]]).astype(np.int64)
        ends = starts + lengths + extra - 1
        values = np.empty(body.size + extra * len(ids), dtype=np.int32)
        is_body = np.ones(values.size, dtype=bool)
        if settings.add_bos:
            values[starts], is_body[starts] = bos_id, False
        if settings.add_eos:
            values[ends], is_body[ends] = eos_id, False
        values[is_body] = body
        lengths_parts.append(lengths + extra)
        value_parts.append(values)
    all_lengths = np.concatenate(lengths_parts) if lengths_parts else np.zeros(0, np.int64)
    offsets = np.concatenate([[0], np.cumsum(all_lengths)])
    if offsets[-1] > np.iinfo(np.int32).max:
        raise ValueError("more than 2**31 tokens in one shard: lower documents_per_shard")
    values = np.concatenate(value_parts) if value_parts else np.zeros(0, np.int32)
    return offsets.astype(np.int32), values


def encode_and_write_shard(path: str, ids: list[str], source: str, texts: list[str | None],
                           settings: EncodeSettings) -> np.ndarray:
    """Encode one shard's documents and write it; returns tokens per document (for stats)."""
    offsets, values = encode_documents(texts, settings)
    table = shard_table(ids, [source] * len(ids), token_lists(offsets, values), settings.tokenizer_hash)
    write_shard(table, path)
    return np.diff(offsets)


def serial_worker_init() -> None:
    """In a worker process, one process = one core: no Rust thread pool on top of it."""
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
