"""The `polynomial` hash family (the project's first): numpy polynomial hashes straight from the bytes.

Words are hashed with a polynomial prefix hash (a word's hash depends only on its bytes: the prefix
hash difference scaled back by the inverse power of its start), word n-gram shingles are combined
from word hashes and folded to 32 bits, and permutation k is x -> a_k * x + b_k mod 2**32 with odd
a_k from np.random.default_rng(seed). The shingle hashes are already well mixed, so these cheap
permutations estimate Jaccard similarity without bias (checked against a 64-bit family in the tests).
No per-shingle Python work, so it is the fastest family; its signatures are not datasketch's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from marin_assets.data.dedup.hash_families import register
from marin_assets.fastpath.hashing.lowercase_words import lowered, shingle_word_ranges, word_spans

_BYTE_BASE = np.uint64(0x100000001B3)  # odd, so it has an inverse modulo 2**64
_BYTE_BASE_INV = np.uint64(pow(0x100000001B3, -1, 2**64))
_SHINGLE_BASE = np.uint64(0x9E3779B97F4A7C15)
_LOW32 = np.uint64(0xFFFFFFFF)
_ONE = np.ones(1, dtype=np.uint64)
_ZERO = np.zeros(1, dtype=np.uint64)


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


def word_hashes_of(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """64-bit hashes of the words of the lower-cased texts (uint64), and words per text."""
    spans = word_spans(texts)
    data = spans.data
    if data.size == 0:
        return np.empty(0, dtype=np.uint64), spans.counts
    _POWERS.ensure(data.size + 1)
    with np.errstate(over="ignore"):
        # lower-cased ASCII byte + 1: no byte hashes to 0
        weighted = (lowered(data).astype(np.uint64) + _ONE) * _POWERS.powers[1 : data.size + 1]
        prefix = np.concatenate((_ZERO, np.cumsum(weighted)))
        return (prefix[spans.ends] - prefix[spans.starts]) * _POWERS.inverse[spans.starts], spans.counts


def _combine_runs(words: np.ndarray, first: np.ndarray, last: np.ndarray, shingle_size: int) -> np.ndarray:
    """Polynomial combination of the word hashes first..last of each shingle (at most shingle_size words)."""
    with np.errstate(over="ignore"):
        out = words[first].copy()
        for k in range(1, shingle_size):
            more = first + k <= last  # a short text's shingle has fewer words
            if more.all():
                out = out * _SHINGLE_BASE + words[first + k]
            else:
                out[more] = out[more] * _SHINGLE_BASE + words[first[more] + k]
    return out


@register("polynomial")
class PolynomialHashes:
    def shingle_hashes(self, texts: Sequence[str], shingle_size: int) -> tuple[np.ndarray, np.ndarray]:
        words, word_counts = word_hashes_of(texts)
        first, last, counts = shingle_word_ranges(word_counts, shingle_size)
        out = _combine_runs(words, first, last, shingle_size) if first.size else np.empty(0, dtype=np.uint64)
        return ((out ^ (out >> np.uint64(32))) & _LOW32).astype(np.uint32), counts

    def permutations(self, num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        generator = np.random.default_rng(seed)
        a = generator.integers(0, 2**31, size=num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
        b = generator.integers(0, 2**32, size=num_perm, dtype=np.uint32)
        return a, b
