"""The `datasketch` hash family: bit-identical signatures to datasketch's default MinHash (2.0, scheme
"affine32"): `MinHash(num_perm, seed).update_batch(s.encode() for s in shingles)`, where a shingle is
" ".join of n consecutive words of text.lower().split() (the whole word list when a text is shorter).

datasketch hashes each shingle with SHA-1 (the first 4 digest bytes, little-endian:
datasketch.hashfunc.sha1_hash32), mixes it with the MurmurHash3 32-bit finalizer, and permutation k is
x -> a_k * x + b_k mod 2**32 with a_k, b_k from np.random.RandomState(seed) (MinHash._init_permutations).
Here the shingles are slices of one buffer of the batch's words, SHA-1 runs over all of them at
once in a compiled kernel (sha1_kernel.py), the rest in numpy over the whole batch. A text without words has no shingles (datasketch users
often hash "" instead; the product gives such a text no signature either way).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from marin_assets.data.dedup.hash_families import register
from marin_assets.fastpath.hashing.sha1_kernel import sha1_hash32_slices
from marin_assets.fastpath.hashing.lowercase_words import lowered, shingle_word_ranges, word_spans

_FMIX = (np.uint32(16), np.uint32(0x85EBCA6B), np.uint32(13), np.uint32(0xC2B2AE35), np.uint32(16))
_SPACE = np.uint8(32)


def fmix32(hashes: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finalizer (datasketch's _fmix), uint32 with wraparound."""
    s1, m1, s2, m2, s3 = _FMIX
    hashes = hashes ^ (hashes >> s1)
    hashes = hashes * m1
    hashes = hashes ^ (hashes >> s2)
    hashes = hashes * m2
    return hashes ^ (hashes >> s3)


@register("datasketch")
class DatasketchSha1:
    def shingle_hashes(self, texts: Sequence[str], shingle_size: int) -> tuple[np.ndarray, np.ndarray]:
        spans = word_spans(texts)
        first, last, counts = shingle_word_ranges(spans.counts, shingle_size)
        if first.size == 0:
            return np.empty(0, dtype=np.uint32), counts
        # One space between the words: keep a word's bytes and the first whitespace byte after it (as a
        # space), so each shingle is one slice of the buffer. Every word but the batch's last is followed
        # by whitespace, so word w starts after the earlier words and one space each: positions come
        # from the words, not from a cumulative sum over every byte.
        in_word = ~spans.is_space
        keep = in_word.copy()
        keep[1:] |= in_word[:-1]
        buffer = lowered(spans.data[keep])
        lengths = spans.ends - spans.starts
        word_at = np.cumsum(lengths + 1) - (lengths + 1)
        after = word_at + lengths
        buffer[after[after < buffer.size]] = _SPACE  # the kept whitespace byte, whichever it was
        starts, ends = word_at[first], word_at[last] + lengths[last]
        return fmix32(sha1_hash32_slices(buffer, starts, ends)), counts

    def permutations(self, num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        generator = np.random.RandomState(seed)  # drawn in datasketch's order: all a, then all b
        a = generator.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
        b = generator.randint(0, 1 << 32, num_perm, dtype=np.uint32)
        return a, b
