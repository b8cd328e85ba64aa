"""Documents -> token ids as numpy offsets + values, in bounded chunks (one big call needs ~60x RAM)."""

from __future__ import annotations

import array
import functools
import os
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from tokenizers import Tokenizer

from marin_assets.tokenize.shards import shard_table, token_lists, write_shard
from marin_assets.tokenize.tokenizer_files import TOKENIZER_FILE, summarize_tokenizer


_INT32 = next(code for code in "il" if array.array(code).itemsize == 4)  # "i" on every usual platform


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
    """int32 offsets (len = documents + 1) and int32 values; a null text encodes like "" (BOS/EOS only).

    The ids are appended, BOS/EOS between them, to an array.array (a C loop per document, no Python
    int per token) that numpy then wraps without a copy."""
    tok, bos_id, eos_id = _load(settings.tokenizer_dir, settings.tokenizer_hash)
    values, lengths = array.array(_INT32), array.array("q")
    for start in range(0, len(texts), settings.batch_documents):
        batch = [t or "" for t in texts[start:start + settings.batch_documents]]
        for encoding in tok.encode_batch_fast(batch, add_special_tokens=False):
            ids = encoding.ids
            if settings.add_bos:
                values.append(bos_id)
            values.fromlist(ids)
            if settings.add_eos:
                values.append(eos_id)
            lengths.append(len(ids))
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(np.frombuffer(lengths, np.int64) + int(settings.add_bos) + int(settings.add_eos), out=offsets[1:])
    if offsets[-1] > np.iinfo(np.int32).max:
        raise ValueError("more than 2**31 tokens in one shard: lower documents_per_shard")
    return offsets.astype(np.int32), np.frombuffer(values, np.int32)


def encode_and_write_shard(path: str, ids: list[str] | pa.Array, source: str, texts: list[str | None],
                           settings: EncodeSettings) -> np.ndarray:
    """Encode one shard's documents and write it; returns tokens per document (for stats).
    `ids` may be the Arrow column as read: it goes into the shard without a round trip through Python."""
    offsets, values = encode_documents(texts, settings)
    table = shard_table(ids, [source] * len(ids), token_lists(offsets, values), settings.tokenizer_hash)
    write_shard(table, path)
    return np.diff(offsets)


def serial_worker_init() -> None:
    """In a worker process, one process = one core: no Rust thread pool on top of it."""
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
