"""datasketch's sha1_hash32 (the first 4 SHA-1 digest bytes, little-endian) of many short byte slices at
once, as compiled XLA kernels on the CPU (JAX) instead of one hashlib call per slice.

A hashlib call costs ~1 µs of Python per 5-word shingle; a kernel runs the 80 SHA-1 rounds over a
whole chunk of messages in vector registers (~0.04 µs each). Messages are padded as FIPS 180-4 says
(0x80, zeros, the bit length big-endian) inside the kernel, so numpy only gathers each message's
first 64 or 128 bytes (a strided view of the buffer) and reads them as big-endian words. Two kernels,
one block and two blocks (up to 119 bytes; 97% of the Debian corpus's shingles), every block unrolled,
only the hash comes out. Longer messages (long "words": URLs, rules of dashes, base64) go through
hashlib: per message it beat a kernel step that carried the SHA-1 state from block to block (0.22 vs
0.35 s for 163k such shingles; XLA computed the step's five state outputs in five loops). Each kernel
is compiled for a fixed chunk size, once, and kept in a cache folder for later processes.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from marin_assets.fastpath.hashing.compiled_kernels import load_or_compile

try:  # CPython's own SHA-1 (HACL*): same digests as hashlib's OpenSSL one, faster on short inputs
    from _sha1 import sha1
except ImportError:  # pragma: no cover - other Pythons
    from hashlib import sha1

# messages per call of each kernel: fixed shapes, one compilation each
CHUNKS = {"1": 1 << 14, "2": 1 << 12}
MAX_BLOCKS = 2  # longer messages (> 119 bytes) go through hashlib
_H0 = np.array([0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0], dtype=np.uint32)
_ROUND_CONSTANTS = (0x5A827999, 0x6ED9EBA1, 0x8F1BBCDC, 0xCA62C1D6)


def block_count(lengths: np.ndarray) -> np.ndarray:
    """SHA-1 blocks of each message: its bytes, the 0x80 byte and the 8-byte length fit in 64-byte blocks."""
    return (lengths + 8) // 64 + 1


def sha1_hash32_slices(buffer, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """sha1_hash32(buffer[s:e]) for each (s, e): uint32, the digest's first 4 bytes read little-endian.
    buffer: bytes or a contiguous 1-D uint8 array."""
    starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
    out = np.empty(starts.size, dtype=np.uint32)
    if starts.size == 0:
        return out
    data = np.frombuffer(buffer, dtype=np.uint8)  # a view of either: no copy
    lengths = ends - starts
    blocks = block_count(lengths)
    rows = _block_rows(data)
    for n_blocks in range(1, MAX_BLOCKS + 1):
        which = np.flatnonzero(blocks == n_blocks)
        if which.size:
            out[which] = _hash_short(rows, starts[which], lengths[which], n_blocks)
    long = np.flatnonzero(blocks > MAX_BLOCKS)
    if long.size:
        out[long] = _hash_with_hashlib(data, starts[long], ends[long])
    return out


def _block_rows(data: np.ndarray) -> np.ndarray:
    """Row s: the 64 bytes from byte s of the data (zeros past its end), the block of a message that
    starts there; a strided view of the padded bytes, so a gather builds a chunk (16 big-endian words a
    row, swapped by _gather_words: no table of 4-byte words at every offset, 4x the data, per batch)."""
    padded = np.concatenate((data, np.zeros(64 * MAX_BLOCKS, dtype=np.uint8)))
    return np.lib.stride_tricks.as_strided(padded, (padded.size - 63, 64), (1, 1), writeable=False)


def _gather_words(out: np.ndarray, rows: np.ndarray, starts: np.ndarray) -> None:
    """out (n, 16) uint32: the big-endian words of the 64 bytes at each start."""
    np.copyto(out, rows[starts].view(">u4"))


def _chunks(count: int, size: int):
    """(lo, n) of each chunk of `size` messages; a kernel call pads a short last chunk with empty
    messages, whose results are dropped."""
    return ((lo, min(size, count - lo)) for lo in range(0, count, size))


def _hash_short(rows: np.ndarray, starts: np.ndarray, lengths: np.ndarray, n_blocks: int) -> np.ndarray:
    """Messages of exactly n_blocks (1 or 2) blocks."""
    name = str(n_blocks)
    kernel, size = _kernel(name), CHUNKS[name]
    out = np.empty(starts.size, dtype=np.uint32)
    chunk, length = np.empty((size, 16 * n_blocks), dtype=np.uint32), np.zeros(size, dtype=np.int32)
    for lo, n in _chunks(starts.size, size):
        for block in range(n_blocks):
            _gather_words(chunk[:n, 16 * block : 16 * block + 16], rows, starts[lo : lo + n] + 64 * block)
        length[:n] = lengths[lo : lo + n]
        length[n:] = 0
        out[lo : lo + n] = np.asarray(kernel(chunk, length))[:n]
    return out


def _hash_with_hashlib(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Messages of more than MAX_BLOCKS blocks, one hashlib call each (no copy of the slice)."""
    view = memoryview(data)
    digests = b"".join([sha1(view[s:e]).digest() for s, e in zip(starts.tolist(), ends.tolist())])
    return np.frombuffer(digests, dtype=np.uint8).reshape(-1, 20)[:, :4].copy().view("<u4").ravel()


@cache
def _kernel(name: str):
    """The compiled kernel `name` (a CHUNKS key): "1" / "2": hash(words (chunk, 16 n), lengths (chunk,)
    int32) of messages of exactly n blocks. Tracing and compiling the 80 unrolled rounds takes seconds:
    it is done once and kept in the cache folder (compiled_kernels)."""
    import jax

    size = CHUNKS[name]
    shapes = (jax.ShapeDtypeStruct((size, 16 * int(name)), "uint32"), jax.ShapeDtypeStruct((size,), "int32"))
    return load_or_compile("sha1_kernel", __file__, f"{name}/{size}", lambda: _traced_kernel(name), shapes)


def _traced_kernel(name: str):
    import jax.numpy as jnp

    u32 = jnp.uint32

    def rotl(x, n):
        return (x << u32(n)) | (x >> u32(32 - n))

    def compress(state, w):
        a, b, c, d, e = state
        w = list(w)
        for t in range(80):
            if t >= 16:
                w.append(rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1))
            if t < 20:
                f = (b & c) | (~b & d)
            elif t < 40 or t >= 60:
                f = b ^ c ^ d
            else:
                f = (b & c) | (b & d) | (c & d)
            a, b, c, d, e = rotl(a, 5) + f + e + u32(_ROUND_CONSTANTS[t // 20]) + w[t], a, rotl(b, 30), c, d
        return tuple(s + x for s, x in zip(state, (a, b, c, d, e)))

    def padded_word(word, j, length):
        """FIPS 180-4 padding of message word j: its bytes before `length`, then 0x80, then zeros."""
        left = length - 4 * j  # message bytes left at this word's first byte
        kept = jnp.clip(left, 0, 4).astype(u32)
        mask = jnp.where(kept == 4, u32(0xFFFFFFFF), ~(u32(0xFFFFFFFF) >> (u32(8) * kept)))  # its first `kept` bytes
        end_marker = jnp.where((left >= 0) & (left < 4), u32(0x80) << (u32(24) - u32(8) * kept), u32(0))
        return (word & mask) | end_marker

    def bit_length(length):
        """The message's length in bits, the last word of its last block (messages are short: the
        length's high word, the word before it, is 0)."""
        return (length * 8).astype(u32)

    def initial_state(length):
        return tuple(jnp.full(length.shape, h, dtype=u32) for h in _H0.tolist())

    def hash32(words, length):
        words = words.T  # one row per word: a message per vector lane (faster than taking this layout in)
        # all of the group's messages have this many blocks: the bit length's place is known (deciding
        # it per lane made XLA's fused two-block kernel take 39 s a call, not 1 ms)
        w = [padded_word(words[j], j, length) for j in range(words.shape[0] - 2)]
        w += [jnp.zeros_like(length, dtype=u32), bit_length(length)]
        state = initial_state(length)
        for block in range(words.shape[0] // 16):
            state = compress(state, w[16 * block : 16 * block + 16])
        h0 = state[0]  # digest bytes 0-3 big-endian; datasketch reads them little-endian
        return (h0 >> 24) | ((h0 >> 8) & u32(0xFF00)) | ((h0 << 8) & u32(0xFF0000)) | (h0 << 24)

    return hash32
