"""MinHash signatures from shingle hashes: for each document and each permutation x -> a * x + b mod 2**32,
the minimum over the document's shingles, in a compiled XLA kernel (JAX on the CPU).

numpy made three passes over a (permutations x shingles) block in memory (multiply, add,
minimum.reduceat; ~0.5 ms per 8192 shingles of 112 permutations); the kernel computes the permuted
values and their minima in one fused loop, no block in memory (~0.06 ms). Its shapes are fixed, so the
shingles are laid out in rows of ROW_WIDTH, a row holding one document's shingles only; a document's
last row is filled up with copies of its last shingle, which cannot change its minimum. The kernel
gives each row's minima, and a document's minima are the minima of its rows (numpy, over 1/ROW_WIDTH
of the values).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from marin_assets.fastpath.hashing.compiled_kernels import load_or_compile

ROW_WIDTH = 32  # shingles a row: 16 ran 2x and 64 ~9x slower per shingle on this machine (cause not traced)
ROWS_PER_CALL = 1024  # one fixed shape: 32k shingle slots a call


def minhash_signatures(shingles: np.ndarray, counts: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(documents with shingles, a.size) uint32 minima. shingles: the uint32 hashes of every document's
    shingles, document after document; counts: each document's number of shingles (0: no row out)."""
    counts = counts[counts > 0].astype(np.int64)
    if counts.size == 0:
        return np.empty((0, a.size), dtype=np.uint32)
    rows = -(-counts // ROW_WIDTH)
    slots = rows * ROW_WIDTH
    first, first_slot = np.cumsum(counts) - counts, np.cumsum(slots) - slots
    # slot s of a document takes its shingle s, past its last shingle the last one again
    source = np.arange(slots.sum()) + np.repeat(first - first_slot, slots)
    np.minimum(source, np.repeat(first + counts - 1, slots), out=source)
    row_minima = _row_minima(shingles[source].reshape(-1, ROW_WIDTH), a, b)
    return np.minimum.reduceat(row_minima, np.cumsum(rows) - rows, axis=0)


def _row_minima(laid_out: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(rows, a.size): each row's minimum of a * x + b over its shingles x, ROWS_PER_CALL rows a call
    (a short last call is filled with zero rows, whose minima are dropped)."""
    kernel = _kernel(a.size)
    a, b = a.astype(np.uint32, copy=False), b.astype(np.uint32, copy=False)
    out = np.empty((len(laid_out), a.size), dtype=np.uint32)
    chunk = np.zeros((ROWS_PER_CALL, ROW_WIDTH), dtype=np.uint32)
    for lo in range(0, len(laid_out), ROWS_PER_CALL):
        n = min(ROWS_PER_CALL, len(laid_out) - lo)
        if n == ROWS_PER_CALL:
            out[lo : lo + n] = np.asarray(kernel(laid_out[lo : lo + n], a, b))
        else:
            chunk[:n] = laid_out[lo : lo + n]
            out[lo : lo + n] = np.asarray(kernel(chunk, a, b))[:n]
    return out


@cache
def _kernel(num_perm: int):
    """minima(rows (ROWS_PER_CALL, ROW_WIDTH), a (num_perm,), b (num_perm,)) uint32 -> (ROWS_PER_CALL, num_perm)."""
    import jax

    shapes = (jax.ShapeDtypeStruct((ROWS_PER_CALL, ROW_WIDTH), "uint32"),
              jax.ShapeDtypeStruct((num_perm,), "uint32"), jax.ShapeDtypeStruct((num_perm,), "uint32"))  # fmt: skip
    parts = f"{ROWS_PER_CALL}/{ROW_WIDTH}/{num_perm}"
    return load_or_compile("minhash_kernel", __file__, parts, _traced_kernel, shapes)


def _traced_kernel():
    def minima(rows, a, b):
        return (rows[:, :, None] * a + b).min(axis=1)  # uint32: wraps mod 2**32, as the permutations do

    return minima
