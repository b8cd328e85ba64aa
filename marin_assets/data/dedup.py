"""Deduplication pieces: exact keys, MinHash signatures, LSH band keys, deterministic clusters.

MinHash is vectorised with numpy over whole batches of documents: the batch is lower-cased and
joined into one UTF-8 buffer, words are hashed straight from the bytes with a polynomial prefix
hash, word n-gram shingles are combined from word hashes, and the permutations are a family of
random affine permutations applied to all shingles of many documents at once (one numpy pass per
block of shingles, not per document). A document's signature does not depend on the batch it is in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from marin_assets.core.hashing import sha256_bytes
from marin_assets.data.normalize import dedup_key

_BYTE_BASE = np.uint64(0x100000001B3)  # odd, so it has an inverse modulo 2**64
_BYTE_BASE_INV = np.uint64(pow(0x100000001B3, -1, 2**64))
_SHINGLE_BASE = np.uint64(0x9E3779B97F4A7C15)
_ROW_BASE = np.uint64(0xC2B2AE3D27D4EB4F)
_LOW32 = np.uint64(0xFFFFFFFF)
_MAX32 = np.iinfo(np.uint32).max
_IS_SPACE = np.zeros(256, dtype=bool)
_IS_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True  # str.split's ASCII whitespace (0x1c-0x1f too)
_TRUE = np.ones(1, dtype=bool)
_ZERO = np.zeros(1, dtype=np.uint64)
_ONE = np.ones(1, dtype=np.uint64)
_ZERO_INT = np.zeros(1, dtype=np.int64)
_LOWER_PLUS_ONE = np.arange(1, 257, dtype=np.uint64)  # byte -> lower-cased ASCII byte + 1
_LOWER_PLUS_ONE[65:91] += 32
_BATCH_BYTES = 1 << 18  # documents hashed together: bounds the byte-level arrays (~10 B per text byte)
_BLOCK = 8192  # shingles per permutation block: num_perm x _BLOCK uint32 stays near the CPU caches


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


def _lower_utf8(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes of " ".join(t.lower() for t in texts) (uint8), and where each text's bytes end.

    ASCII letters are lowered with a byte table (_LOWER_PLUS_ONE, later); str.lower, slow on non-ASCII
    strings, runs only on texts whose non-ASCII characters change case. Those characters' UTF-8
    bytes are all >= 0x80, so the batch's non-ASCII bytes alone decode to its non-ASCII characters.
    A text with non-ASCII whitespace (no-break space, U+2000..., which str.split splits on) is
    rewritten with ASCII spaces between its words: the words are str.split's, as in shingle_set.
    """
    encoded = [text.encode("utf-8") for text in texts]
    data, ends = _joined(encoded)
    high = data >= 0x80
    non_ascii = data[high].tobytes()
    chars = non_ascii.decode("utf-8")
    if chars.lower() != chars or _has_space(chars):
        bounds = np.concatenate((_ZERO_INT, np.cumsum(high)))[np.concatenate((_ZERO_INT, ends))]
        for i in np.flatnonzero(bounds[1:] > bounds[:-1]):  # the texts with non-ASCII characters
            own = non_ascii[bounds[i] : bounds[i + 1]].decode("utf-8")
            if _has_space(own):
                encoded[i] = " ".join(texts[i].lower().split()).encode("utf-8")
            elif own.lower() != own:
                encoded[i] = texts[i].lower().encode("utf-8")
        data, ends = _joined(encoded)
    return data, ends


def _has_space(text: str) -> bool:
    return not text.isprintable() and any(c.isspace() for c in text)  # isprintable: a fast pre-test


def _joined(encoded: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    ends = np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)) + 1) - 1
    return np.frombuffer(b" ".join(encoded), dtype=np.uint8), ends


def _word_hashes(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """64-bit hashes of the whitespace-separated words of the lower-cased texts, and words per text.

    The texts are joined with a space, so no word spans two texts, and a word's hash depends only
    on its bytes (prefix-hash difference scaled back by the inverse power of its start).
    """
    data, text_ends = _lower_utf8(texts)
    if data.size == 0:
        return np.empty(0, dtype=np.uint64), np.zeros(len(texts), dtype=np.int64)
    # word boundaries alternate start, end, start, ... between padding spaces
    padded = np.concatenate((_TRUE, _IS_SPACE[data], _TRUE))
    boundaries = np.flatnonzero(padded[:-1] != padded[1:])
    starts, ends = boundaries[0::2], boundaries[1::2]
    words_upto = np.searchsorted(starts, text_ends)
    counts = words_upto - np.concatenate((_ZERO_INT, words_upto[:-1]))
    _POWERS.ensure(data.size + 1)
    with np.errstate(over="ignore"):
        weighted = _LOWER_PLUS_ONE[data] * _POWERS.powers[1 : data.size + 1]
        prefix = np.concatenate((_ZERO, np.cumsum(weighted)))
        return (prefix[ends] - prefix[starts]) * _POWERS.inverse[starts], counts


def word_hashes(text: str) -> np.ndarray:
    """64-bit hash of each whitespace-separated word of the lower-cased text (uint64)."""
    return _word_hashes([text])[0]


def _combine(words: np.ndarray, n: int) -> np.ndarray:
    """Polynomial combination of each run of n consecutive word hashes (uint64)."""
    m = words.size - n + 1
    with np.errstate(over="ignore"):
        out = words[:m].copy()
        for k in range(1, n):
            out = out * _SHINGLE_BASE + words[k : k + m]
    return out


def _shingle_hashes(texts: Sequence[str], shingle_size: int) -> tuple[np.ndarray, np.ndarray]:
    """32-bit hashes (uint32) of the word n-grams of all texts, and each text's shingle count.

    A text shorter than one shingle is one shingle of all its words; an empty text has none.
    """
    words, counts = _word_hashes(texts)
    long_counts = np.maximum(counts - shingle_size + 1, 0)
    out = _combine(words, shingle_size) if words.size >= shingle_size else np.empty(0, dtype=np.uint64)
    if counts.size > 1 and out.size:  # drop the n-grams that span two texts
        text_of = np.repeat(np.arange(counts.size), counts)[: out.size]
        position = np.arange(out.size) - (np.cumsum(counts) - counts)[text_of]
        out = out[position < long_counts[text_of]]
    short = np.flatnonzero((counts > 0) & (counts < shingle_size))
    if short.size:  # each short text is one shingle of all its words, placed in text order
        word_starts = np.cumsum(counts) - counts
        values = [_combine(words[word_starts[i] : word_starts[i] + counts[i]], counts[i])[0] for i in short]
        out = np.insert(out, (np.cumsum(long_counts) - long_counts)[short], values)
    shingle_counts = long_counts + (counts > 0) * (counts < shingle_size)
    return ((out ^ (out >> np.uint64(32))) & _LOW32).astype(np.uint32), shingle_counts


def shingle_hashes(text: str, shingle_size: int) -> np.ndarray:
    """32-bit hashes (uint32) of the word n-grams (a shorter text is one shingle; an empty text has none)."""
    return _shingle_hashes([text], shingle_size)[0]


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
        self._block = np.empty(num_perm * _BLOCK, dtype=np.uint32)  # scratch: one hasher per thread

    def signatures(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(len(texts), num_perm) minimum hashes (uint32), and which texts have words (others: no signature)."""
        sigs = np.empty((self.a.size, len(texts)), dtype=np.uint32)
        has_words = np.empty(len(texts), dtype=bool)
        lo = 0
        for hi in _batch_ends(texts):
            has_words[lo:hi] = self._signatures_into(texts[lo:hi], sigs[:, lo:hi])
            lo = hi
        return np.ascontiguousarray(sigs.T), has_words

    def signature(self, text: str) -> np.ndarray | None:
        """num_perm minimum hashes (uint32), or None when the text has no words."""
        shingles = _shingle_hashes([text], self.shingle_size)[0]
        if shingles.size == 0:
            return None
        sig = np.full(self.a.size, _MAX32, dtype=np.uint32)
        for lo in range(0, shingles.size, _BLOCK):  # one text: a plain minimum, no segments
            block = np.multiply.outer(shingles[lo : lo + _BLOCK], self.a)
            block += self.b
            np.minimum(sig, block.min(axis=0), out=sig)
        return sig

    def _signatures_into(self, texts: Sequence[str], sigs: np.ndarray) -> np.ndarray:
        shingles, counts = _shingle_hashes(texts, self.shingle_size)
        has_words = counts > 0
        sigs.fill(_MAX32)
        nonempty = np.flatnonzero(has_words)
        starts = np.cumsum(counts[nonempty]) - counts[nonempty]  # strictly increasing: reduceat segments
        a, b = self.a[:, None], self.b[:, None]
        for lo in range(0, shingles.size, _BLOCK):
            hi = min(shingles.size, lo + _BLOCK)
            first, last = np.searchsorted(starts, lo, side="right") - 1, np.searchsorted(starts, hi)
            block = self._block[: self.a.size * (hi - lo)].reshape(self.a.size, hi - lo)  # contiguous
            np.multiply(a, shingles[lo:hi], out=block)
            np.add(block, b, out=block)
            partial = np.minimum.reduceat(block, np.maximum(starts[first:last], lo) - lo, axis=1)
            columns = nonempty[first:last]
            sigs[:, columns] = np.minimum(sigs[:, columns], partial)
        return has_words


def _batch_ends(texts: Sequence[str]) -> list[int]:
    """End indices of consecutive runs of texts of about _BATCH_BYTES characters (at least one text each)."""
    ends, size = [], 0
    for i, text in enumerate(texts):
        size += len(text)
        if size >= _BATCH_BYTES:
            ends.append(i + 1)
            size = 0
    if not ends or ends[-1] != len(texts):
        ends.append(len(texts))
    return ends


def band_key_matrix(signatures: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """(documents, bands) signed 64-bit band keys of (documents, >= bands * rows) signatures."""
    grid = signatures[:, : bands * rows].astype(np.uint64).reshape(len(signatures), bands, rows)
    with np.errstate(over="ignore"):
        key = np.zeros(grid.shape[:2], dtype=np.uint64)
        for r in range(rows):
            key = key * _ROW_BASE + grid[:, :, r]
    return key.view(np.int64)


def band_keys(signature: np.ndarray, bands: int, rows: int) -> list[int]:
    """One signed 64-bit key per band: documents sharing any band key are duplicate candidates."""
    return band_key_matrix(signature[None, :], bands, rows)[0].tolist()


def lsh_star_edges(band_key_rows: np.ndarray) -> np.ndarray:
    """Candidate edges (rep, member) of in-memory LSH: row indices, rows ordered by document id.

    The same edges as spark_dedup.near_duplicates builds in Spark: in every band, the rows
    sharing a key form a bucket, joined to the bucket's first row (the smallest id); sorted, unique.
    """
    n = len(band_key_rows)
    if n == 0:
        return np.empty((0, 2), dtype=np.int64)
    rows = np.arange(n, dtype=np.int64)
    edges = []
    for keys in band_key_rows.T:
        order = np.lexsort((rows, keys))  # by key, then by row: each bucket starts with its smallest id
        sorted_keys = keys[order]
        new_bucket = np.concatenate((_TRUE, sorted_keys[1:] != sorted_keys[:-1]))
        rep = order[np.flatnonzero(new_bucket)[np.cumsum(new_bucket) - 1]]
        member = ~new_bucket
        edges.append(rep[member] * n + order[member])
    unique = np.unique(np.concatenate(edges)) if edges else np.empty(0, dtype=np.int64)
    return np.stack((unique // n, unique % n), axis=1)


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
