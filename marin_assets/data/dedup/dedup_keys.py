"""Deduplication pieces: exact keys, MinHash signatures, LSH band keys, deterministic clusters.

MinHash is vectorised over whole batches of documents: a hash family (hash_families/) turns the batch
into 32-bit shingle hashes (the default, `datasketch`, bit-identical to datasketch MinHash;
`polynomial`, numpy hashes from the bytes), and a family of random affine permutations is applied to
all shingles of many documents at once, their minima taken in a compiled kernel (minhash_kernel.py).
A document's signature does not depend on the batch it is in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from marin_assets.core.hashing import sha256_bytes
from marin_assets.data.dedup.hash_families import hash_family
from marin_assets.data.dedup.hash_families.polynomial import word_hashes_of
from marin_assets.data.dedup.minhash_kernel import minhash_signatures
from marin_assets.data.clean.normalize import dedup_key

_ROW_BASE = np.uint64(0xC2B2AE3D27D4EB4F)
_MAX32 = np.iinfo(np.uint32).max
_TRUE = np.ones(1, dtype=bool)
_BATCH_BYTES = 1 << 20  # documents hashed together: bounds the byte-level arrays (~10 B per text byte);
# 1 MB fills the SHA-1 kernels' chunks (256 KB: 4x the calls, long messages in part-empty chunks)
# The recipe's default (issue 52): numpy hashes, no SHA-1 kernel; judged by precision and recall against exact
# Jaccard (benchmarks/bench_hash_families.py), where it equals `datasketch`, the family bit-identical to datasketch.
DEFAULT_HASH_FAMILY = "polynomial"


def exact_key(text: str) -> str:
    """Documents with equal keys are exact duplicates (same text up to case and whitespace)."""
    return sha256_bytes(dedup_key(text).encode())


def word_hashes(text: str) -> np.ndarray:
    """64-bit hash of each whitespace-separated word of the lower-cased text (uint64)."""
    return word_hashes_of([text])[0]


def shingle_hashes(text: str, shingle_size: int, family: str = DEFAULT_HASH_FAMILY) -> np.ndarray:
    """32-bit hashes (uint32) of the word n-grams (a shorter text is one shingle; an empty text has none)."""
    return hash_family(family).shingle_hashes([text], shingle_size)[0]


class MinHasher:
    """MinHash over word n-grams; permutation i is x -> (a_i * x + b_i) mod 2**32 with odd a_i.

    The hash family (hash_families/, a recipe choice) gives the shingle hashes and a, b; the minima are
    taken in a compiled kernel (minhash_kernel).
    """

    def __init__(self, num_perm: int = 112, shingle_size: int = 5, seed: int = 1,
                 family: str = DEFAULT_HASH_FAMILY):  # fmt: skip
        self.family = hash_family(family)
        self.shingle_size = shingle_size
        self.a, self.b = self.family.permutations(num_perm, seed)

    def signatures(self, texts) -> tuple[np.ndarray, np.ndarray]:
        """(len(texts), num_perm) minimum hashes (uint32), and which texts have words (others: no signature).
        texts: a sequence of str, or an Arrow string array (hashed from its UTF-8 buffer; null: no words)."""
        sigs = np.full((len(texts), self.a.size), _MAX32, dtype=np.uint32)
        has_words = np.empty(len(texts), dtype=bool)
        lo = 0
        for hi in _batch_ends(texts):
            shingles, counts = self.family.shingle_hashes(texts[lo:hi], self.shingle_size)
            has_words[lo:hi] = counts > 0
            sigs[lo + np.flatnonzero(counts)] = minhash_signatures(shingles, counts, self.a, self.b)
            lo = hi
        return sigs, has_words

    def signature(self, text: str) -> np.ndarray | None:
        """num_perm minimum hashes (uint32), or None when the text has no words."""
        sigs, has_words = self.signatures([text])
        return sigs[0] if has_words[0] else None


def _batch_ends(texts) -> list[int]:
    """End indices of consecutive runs of texts of about _BATCH_BYTES characters or bytes (at least one
    text each)."""
    if isinstance(texts, Sequence):
        sizes = map(len, texts)
    else:  # an Arrow string array
        import pyarrow.compute as pc

        sizes = pc.binary_length(texts).fill_null(0).to_numpy().tolist()
    ends, size = [], 0
    for i, length in enumerate(sizes):
        size += length
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
