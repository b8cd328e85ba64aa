"""Deduplication pieces: exact keys, MinHash signatures, LSH band keys, deterministic clusters.

MinHash is vectorised with numpy: words are hashed straight from the UTF-8 bytes with a polynomial
prefix hash, word n-gram shingles are combined from word hashes, and the permutations are a
family of random affine permutations applied to all shingles at once.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from marin_assets.core.hashing import sha256_bytes
from marin_assets.data.normalize import dedup_key

_BYTE_BASE = np.uint64(0x100000001B3)  # odd, so it has an inverse modulo 2**64
_BYTE_BASE_INV = np.uint64(pow(0x100000001B3, -1, 2**64))
_SHINGLE_BASE = np.uint64(0x9E3779B97F4A7C15)
_ROW_BASE = np.uint64(0xC2B2AE3D27D4EB4F)
_LOW32 = np.uint64(0xFFFFFFFF)
_IS_SPACE = np.zeros(256, dtype=bool)
_IS_SPACE[[9, 10, 11, 12, 13, 32]] = True
_TRUE = np.ones(1, dtype=bool)
_ZERO = np.zeros(1, dtype=np.uint64)
_ONE = np.ones(1, dtype=np.uint64)
_CHUNK = 4096  # shingles per block, bounds memory for very long documents


def exact_key(text: str) -> str:
    """Documents with equal keys are exact duplicates (same text up to case and whitespace)."""
    return sha256_bytes(dedup_key(text).encode())


class _PowerTable:
    """base**j and base**-j modulo 2**64 for j < size, grown on demand (computed once per process)."""

    def __init__(self):
        self.powers = self.inverse = np.ones(1, dtype=np.uint64)

    def ensure(self, size: int) -> None:
        if self.powers.size > size:
            return
        n = max(size + 1, 2 * self.powers.size)
        with np.errstate(over="ignore"):
            self.powers = np.concatenate((_ONE, np.cumprod(np.full(n - 1, _BYTE_BASE, dtype=np.uint64))))
            self.inverse = np.concatenate((_ONE, np.cumprod(np.full(n - 1, _BYTE_BASE_INV, dtype=np.uint64))))


_POWERS = _PowerTable()


def word_hashes(text: str) -> np.ndarray:
    """64-bit hash of each whitespace-separated word of the lower-cased text (uint64)."""
    data = np.frombuffer(text.lower().encode("utf-8"), dtype=np.uint8)
    if data.size == 0:
        return np.empty(0, dtype=np.uint64)
    padded = np.concatenate((_TRUE, _IS_SPACE[data], _TRUE))
    starts = np.flatnonzero(padded[:-2] & ~padded[1:-1])
    ends = np.flatnonzero(~padded[1:-1] & padded[2:]) + 1
    _POWERS.ensure(data.size + 1)
    with np.errstate(over="ignore"):
        weighted = (data.astype(np.uint64) + _ONE) * _POWERS.powers[1 : data.size + 1]
        prefix = np.concatenate((_ZERO, np.cumsum(weighted)))
        return (prefix[ends] - prefix[starts]) * _POWERS.inverse[starts]


def shingle_hashes(text: str, shingle_size: int) -> np.ndarray:
    """32-bit hashes (uint32) of the word n-grams (a shorter text is one shingle; an empty text has none)."""
    words = word_hashes(text)
    if words.size == 0:
        return np.empty(0, dtype=np.uint32)
    n = min(shingle_size, words.size)
    m = words.size - n + 1
    with np.errstate(over="ignore"):
        out = words[:m].copy()
        for k in range(1, n):
            out = out * _SHINGLE_BASE + words[k : k + m]
    return ((out ^ (out >> np.uint64(32))) & _LOW32).astype(np.uint32)


class MinHasher:
    """MinHash over word n-grams; permutation i is x -> (a_i * x + b_i) mod 2**32 with odd a_i.

    The shingle hashes are already well mixed, so these cheap 32-bit permutations estimate Jaccard
    similarity without bias (checked against the 64-bit multiply-shift family in the tests).
    """

    def __init__(self, num_perm: int = 112, shingle_size: int = 5, seed: int = 1):
        rng = np.random.default_rng(seed)
        self.shingle_size = shingle_size
        self.a = rng.integers(0, 2**31, size=num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
        self.b = rng.integers(0, 2**32, size=num_perm, dtype=np.uint32)

    def signature(self, text: str) -> np.ndarray | None:
        """num_perm minimum hashes (uint32), or None when the text has no words."""
        shingles = shingle_hashes(text, self.shingle_size)
        if shingles.size == 0:
            return None
        sig = np.full(self.a.size, np.iinfo(np.uint32).max, dtype=np.uint32)
        for i in range(0, shingles.size, _CHUNK):
            block = np.multiply.outer(shingles[i : i + _CHUNK], self.a)
            block += self.b
            np.minimum(sig, block.min(axis=0), out=sig)
        return sig


def band_keys(signature: np.ndarray, bands: int, rows: int) -> list[int]:
    """One signed 64-bit key per band: documents sharing any band key are duplicate candidates."""
    grid = signature[: bands * rows].astype(np.uint64).reshape(bands, rows)
    with np.errstate(over="ignore"):
        key = np.zeros(bands, dtype=np.uint64)
        for r in range(rows):
            key = key * _ROW_BASE + grid[:, r]
    return key.view(np.int64).tolist()


def cluster_representatives(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Union-find over candidate pairs: each member that is not its cluster's smallest id -> that id."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            small, large = (ra, rb) if ra < rb else (rb, ra)
            parent[large] = small
    return {x: find(x) for x in parent}
