"""The compiled MinHash kernel: each document's minimum of every permutation, as numpy computes it."""

from __future__ import annotations

import numpy as np
import pytest

from marin_assets.data.dedup.hash_families import hash_family
from marin_assets.data.dedup.minhash_kernel import ROW_WIDTH, ROWS_PER_CALL, minhash_signatures


def _expected(shingles: np.ndarray, counts: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    rows, lo = [], 0
    for count in counts.tolist():
        if count:
            rows.append((np.multiply.outer(shingles[lo : lo + count], a) + b).min(axis=0))
        lo += count
    return np.array(rows, dtype=np.uint32).reshape(-1, a.size)


def _permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    return hash_family("polynomial").permutations(num_perm, seed)


@pytest.mark.parametrize(
    "counts",
    [
        [1],  # one shingle: a row of copies of it
        [ROW_WIDTH, ROW_WIDTH - 1, ROW_WIDTH + 1, 2 * ROW_WIDTH],  # at the row boundaries
        [0, 5, 0, 0, 17, 0],  # documents without shingles give no row
        [ROW_WIDTH * ROWS_PER_CALL + 3],  # one document over more than one kernel call
        [3, 700, 1, 40] * 400,  # many documents across calls, a short last call
    ],
)
def test_minima_equal_numpys_for_every_layout(counts):
    counts = np.array(counts, dtype=np.int64)
    rng = np.random.default_rng(int(counts.sum()))
    shingles = rng.integers(0, 1 << 32, int(counts.sum()), dtype=np.uint32)
    a, b = _permutations(112, 1)
    got = minhash_signatures(shingles, counts, a, b)
    assert got.dtype == np.uint32 and got.shape == ((counts > 0).sum(), 112)
    assert np.array_equal(got, _expected(shingles, counts, a, b))


def test_minima_wrap_mod_2_32_and_take_other_permutation_counts():
    a, b = _permutations(16, 7)
    shingles = np.array([0xFFFFFFFF, 0x80000000, 1, 0], dtype=np.uint32)  # products past 2**32 wrap
    counts = np.array([2, 2])
    assert np.array_equal(minhash_signatures(shingles, counts, a, b), _expected(shingles, counts, a, b))


def test_no_documents_with_shingles_gives_no_rows():
    a, b = _permutations(112, 1)
    assert minhash_signatures(np.empty(0, dtype=np.uint32), np.array([0, 0]), a, b).shape == (0, 112)
