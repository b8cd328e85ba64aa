"""Per-document hashes and seeded keys of the mixture planner, and sources read in bounded chunks.

Each document gets one sha256 of (source, id), cut to 64 bits: h. Its split unit is h / 2**64
(validation membership), and every seeded choice is a key mixed from h and a salt of (seed, purpose,
pass), vectorised in numpy: the subset of a partly taken source is the documents with the smallest
subset keys, the train order is ascending order keys. A key depends on nothing but the document, the
seed and the purpose, so any pass over the documents, in any chunks, computes the same keys.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

BUCKET_BITS = 16  # streaming histograms count keys by their top 16 bits: 65,536 buckets, 1 MB a histogram
BUCKETS = 2**BUCKET_BITS
DOCUMENT_RECORD = np.dtype([("hash", "<u8"), ("length", "<i8")])  # a source's index file: 16 bytes a document
_M1, _M2, _S33 = np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53), np.uint64(33)


def document_hashes(source: str, ids) -> np.ndarray:
    """sha256(source \\0 id), first 8 bytes big-endian, as uint64 (the split unit's numerator)."""
    digests = b"".join(hashlib.sha256(f"{source}\0{i}".encode()).digest()[:8] for i in ids)
    return np.frombuffer(digests, dtype=">u8").astype(np.uint64)


def units(hashes: np.ndarray) -> np.ndarray:
    """h / 2**64 in [0, 1): float64 rounding of h, then an exact power-of-two division (as Python's int / int)."""
    return hashes.astype(np.float64) / 2.0**64


def validation_mask(hashes: np.ndarray, fraction: float) -> np.ndarray:
    return units(hashes) < fraction if fraction > 0 else np.zeros(hashes.size, dtype=bool)


def salt(seed: int, purpose: str, pass_: int = 0) -> np.uint64:
    return np.uint64(int.from_bytes(hashlib.sha256(f"{seed}\0{purpose}\0{pass_}".encode()).digest()[:8], "big"))


def mix(hashes: np.ndarray, salted: np.uint64) -> np.ndarray:
    """murmur3's 64-bit finaliser of h ^ salt: a bijection, so distinct documents keep distinct keys."""
    x = hashes ^ salted
    x ^= x >> _S33
    x *= _M1
    x ^= x >> _S33
    x *= _M2
    x ^= x >> _S33
    return x


def subset_keys(hashes: np.ndarray, seed: int) -> np.ndarray:
    return mix(hashes, salt(seed, "mixture-subset"))


def order_keys(hashes: np.ndarray, seed: int, pass_: int) -> np.ndarray:
    """Train order key of (seed, source, id, pass): each pass over a source is shuffled on its own."""
    return mix(hashes, salt(seed, "mixture-order", pass_))


def top_bucket(keys: np.ndarray) -> np.ndarray:
    return (keys >> np.uint64(64 - BUCKET_BITS)).astype(np.int64)


@dataclass(frozen=True)
class SourceDocuments:
    """One source held in memory (tests, small inputs): per document its hash h and length, never its id."""

    name: str
    hashes: np.ndarray   # uint64
    lengths: np.ndarray  # tokens per document (BOS/EOS included)

    @classmethod
    def from_ids(cls, name: str, ids: list[str], lengths) -> SourceDocuments:
        return cls(name, document_hashes(name, ids), np.asarray(lengths, dtype=np.int64))

    @property
    def size(self) -> int:
        return int(self.lengths.size)

    def chunks(self, size: int) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        for first in range(0, self.size, size):
            yield first, self.hashes[first : first + size], self.lengths[first : first + size]


@dataclass(frozen=True)
class DocumentFile:
    """One source as a local file of DOCUMENT_RECORD (written by mixture_stream.index_source), read in chunks:
    the planner and the writer never hold more than a chunk of its documents."""

    name: str
    path: str
    size: int

    def chunks(self, size: int) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        with open(self.path, "rb") as f:
            for first in range(0, self.size, size):
                records = np.fromfile(f, dtype=DOCUMENT_RECORD, count=size)
                yield first, records["hash"].copy(), records["length"].copy()
