"""datasketch's sha1_hash32 (the first 4 SHA-1 digest bytes, little-endian) of many short byte slices at
once, as one compiled XLA kernel on the CPU (JAX) instead of one hashlib call per slice.

A hashlib call costs ~1 µs of Python per 5-word shingle; the kernel runs the 80 SHA-1 rounds over a
whole chunk of messages in vector registers (~0.05 µs each). Messages are padded as FIPS 180-4 says
(0x80, zeros, the bit length big-endian) inside the kernel, from 64-byte windows of the caller's
buffer, so numpy only copies one window per message. Messages of one or two blocks (up to 119 bytes)
go through the kernel; longer ones, rare among shingles, through hashlib. Each kernel is compiled
for a fixed chunk size, once per block count, and kept in a cache folder for later processes.
"""

from __future__ import annotations

import os
import pickle
import platform
from functools import cache
from pathlib import Path

import numpy as np

from marin_assets.core.hashing import sha256_bytes

try:  # CPython's own SHA-1 (HACL*): same digests as hashlib's OpenSSL one, faster on short inputs
    from _sha1 import sha1
except ImportError:  # pragma: no cover - other Pythons
    from hashlib import sha1

CHUNKS = {1: 1 << 14, 2: 1 << 12}  # messages per kernel call, by block count: fixed shapes, one compilation each
MAX_BLOCKS = max(CHUNKS)  # longer messages (> 119 bytes) go through hashlib
_H0 = (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0)
_ROUND_CONSTANTS = (0x5A827999, 0x6ED9EBA1, 0x8F1BBCDC, 0xCA62C1D6)
CACHE_ENV = "MARIN_JAX_CACHE_DIR"  # the folder compiled kernels are kept in (also training's JAX cache)


def block_count(lengths: np.ndarray) -> np.ndarray:
    """SHA-1 blocks of each message: its bytes, the 0x80 byte and the 8-byte length fit in 64-byte blocks."""
    return (lengths + 8) // 64 + 1


def sha1_hash32_slices(buffer: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """sha1_hash32(buffer[s:e]) for each (s, e): uint32, the digest's first 4 bytes read little-endian."""
    starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
    out = np.empty(starts.size, dtype=np.uint32)
    if starts.size == 0:
        return out
    lengths = ends - starts
    blocks = block_count(lengths)
    words = _big_endian_words(buffer) if (blocks <= MAX_BLOCKS).any() else None
    for n_blocks in range(1, MAX_BLOCKS + 1):
        which = np.flatnonzero(blocks == n_blocks)
        if which.size:
            out[which] = _hash_group(words, starts[which], lengths[which], n_blocks)
    for i in np.flatnonzero(blocks > MAX_BLOCKS).tolist():
        out[i] = int.from_bytes(sha1(buffer[starts[i] : ends[i]]).digest()[:4], "little")
    return out


def _big_endian_words(buffer: bytes) -> np.ndarray:
    """The big-endian uint32 starting at every byte of the buffer (zeros past its end): a message's
    SHA-1 words are these at its start + 4 j, so one gather per word builds the blocks."""
    b = np.frombuffer(buffer + bytes(64 * MAX_BLOCKS + 3), dtype=np.uint8).astype(np.uint32)
    return (b[:-3] << 24) | (b[1:-2] << 16) | (b[2:-1] << 8) | b[3:]


def _hash_group(words: np.ndarray, starts: np.ndarray, lengths: np.ndarray, n_blocks: int) -> np.ndarray:
    """Messages of n_blocks blocks, CHUNKS[n_blocks] at a time (the last chunk padded with empty messages)."""
    kernel, chunk_size, width = _kernel(n_blocks), CHUNKS[n_blocks], 16 * n_blocks
    # row s of this view: the words at s, s + 4, ..., one message's words when it starts at s
    rows = np.lib.stride_tricks.as_strided(words, (words.size - 4 * (width - 1), width),
                                           (words.itemsize, 4 * words.itemsize), writeable=False)  # fmt: skip
    out = np.empty(starts.size, dtype=np.uint32)
    chunk, length = np.empty((chunk_size, width), dtype=np.uint32), np.zeros(chunk_size, dtype=np.int32)
    for lo in range(0, starts.size, chunk_size):
        n = min(starts.size - lo, chunk_size)
        chunk[:n] = rows[starts[lo : lo + n]]
        length[:n] = lengths[lo : lo + n]
        length[n:] = 0  # the rest: empty messages (whatever their words), results dropped
        out[lo : lo + n] = np.asarray(kernel(chunk, length))[:n]
    return out


@cache
def _kernel(n_blocks: int):
    """kernel(words (chunk, 16 n_blocks) uint32 read from each message's start, lengths (chunk,) int32).

    Tracing and compiling the 80 unrolled rounds takes seconds, in every fresh Spark Python worker: the
    compiled kernel is saved once in the cache folder (named by this code, JAX and the CPU's features)
    and later processes load it in milliseconds.
    """
    import jax
    from jax.experimental import serialize_executable

    saved = _cache_dir() / f"sha1_kernel-{_kernel_key(n_blocks)}.pickle"
    if saved.is_file():
        try:
            return serialize_executable.deserialize_and_load(*pickle.loads(saved.read_bytes()))
        except Exception:  # noqa: BLE001 - damaged or from elsewhere: compile again below
            pass
    size = CHUNKS[n_blocks]
    shapes = (jax.ShapeDtypeStruct((size, 16 * n_blocks), "uint32"), jax.ShapeDtypeStruct((size,), "int32"))
    compiled = jax.jit(_traced_kernel(n_blocks)).lower(*shapes).compile()
    tmp = saved.with_name(f"{saved.name}.{os.getpid()}.tmp")  # workers may write it at once: whole or absent
    try:
        saved.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(pickle.dumps(serialize_executable.serialize(compiled)))
        os.replace(tmp, saved)
    except OSError:  # a read-only or full disk: this process keeps its kernel, the next compiles again
        tmp.unlink(missing_ok=True)
    return compiled


def _kernel_key(n_blocks: int) -> str:
    """This module's code, the JAX version, the shapes, and the CPU's instruction set extensions (the
    compiled code uses them)."""
    import jax

    cpu = Path("/proc/cpuinfo")
    lines = cpu.read_text().splitlines() if cpu.is_file() else []
    flags = next((line for line in lines if line.startswith("flags")), "")
    parts = f"{jax.__version__}/{platform.machine()}/{flags}/{n_blocks}/{CHUNKS[n_blocks]}"
    return sha256_bytes(Path(__file__).read_bytes() + parts.encode())[:16]


def _traced_kernel(n_blocks: int):
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
        """FIPS 180-4 padding of word j: the message's bytes before `length`, then 0x80, then zeros."""
        left = length - 4 * j  # message bytes left at this word's first byte
        kept = jnp.clip(left, 0, 4).astype(u32)
        mask = jnp.where(kept == 4, u32(0xFFFFFFFF), ~(u32(0xFFFFFFFF) >> (u32(8) * kept)))  # its first `kept` bytes
        end_marker = jnp.where((left >= 0) & (left < 4), u32(0x80) << (u32(24) - u32(8) * kept), u32(0))
        return (word & mask) | end_marker

    def hash32(words, length):
        words = words.T  # one row per word: a message per vector lane (faster than taking this layout in)
        n_words = words.shape[0]
        w = [padded_word(words[j], j, length) for j in range(n_words - 2)]
        w += [u32(0) * words[0], (length * 8).astype(u32)]  # the bit length: messages are short, its high word is 0
        state = tuple(jnp.full(length.shape, h, dtype=u32) for h in _H0)
        for block in range(n_words // 16):
            state = compress(state, w[16 * block : 16 * block + 16])
        h0 = state[0]  # digest bytes 0-3 big-endian; datasketch reads them little-endian
        return (h0 >> 24) | ((h0 >> 8) & u32(0xFF00)) | ((h0 << 8) & u32(0xFF0000)) | (h0 << 24)

    return hash32


def _cache_dir() -> Path:
    """MARIN_JAX_CACHE_DIR when it names a local folder (training's setting, which may also be a
    storage URI), else ~/.cache/marin_assets/jax."""
    folder = os.environ.get(CACHE_ENV, "")
    return Path(folder) if folder and "://" not in folder else Path.home() / ".cache" / "marin_assets" / "jax"
