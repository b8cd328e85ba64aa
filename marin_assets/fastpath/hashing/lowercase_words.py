"""Whitespace-separated words of many lower-cased texts at once, as byte spans of one UTF-8 buffer.

The words are str.split's words of text.lower() (what the dedup precision check and datasketch users
shingle), found with numpy over the whole batch: the texts are joined with a space, so no word spans
two texts. A batch is a sequence of str or an Arrow string array, whose UTF-8 buffer is used as it is
(no Python string per text). ASCII letters are lowered and spaces found by byte comparisons (numpy
vectorises them; a byte-table lookup costs ~8x as much); str.lower, slow on non-ASCII
strings, runs only on texts whose non-ASCII characters change case. Those characters' UTF-8 bytes are
all >= 0x80, so the batch's non-ASCII bytes alone decode to its non-ASCII characters. Non-ASCII
whitespace (no-break space, U+2000..., which str.split splits on) is found in the bytes: every byte of
such a character counts as a space.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

# str.isspace's characters above ASCII (a test checks this against every code point): 2 or 3 UTF-8 bytes
UNICODE_SPACES = (0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000)
_SPACE_KEYS = {n: np.array([int.from_bytes(chr(c).encode()) for c in UNICODE_SPACES if len(chr(c).encode()) == n])
               for n in (2, 3)}  # fmt: skip
_TRUE = np.ones(1, dtype=bool)
_ZERO_INT = np.zeros(1, dtype=np.int64)
_PAD = np.zeros(2, dtype=np.uint8)


class WordSpans(NamedTuple):
    """data: the joined UTF-8 bytes (ASCII letters not yet lowered; apply lowered); is_space: which of
    those bytes separate words; word w is data[starts[w]:ends[w]]; text i has counts[i] words, in order,
    after those of texts < i."""

    data: np.ndarray
    is_space: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    counts: np.ndarray


def word_spans(texts) -> WordSpans:
    """texts: a sequence of str, or an Arrow string / large_string array (a null is an empty text)."""
    data, text_ends = _lower_utf8(texts)
    is_space = space_mask(data)
    if data.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return WordSpans(data, is_space, empty, empty, np.zeros(len(texts), dtype=np.int64))
    # word boundaries alternate start, end, start, ... between padding spaces
    padded = np.concatenate((_TRUE, is_space, _TRUE))
    boundaries = np.flatnonzero(padded[:-1] != padded[1:])
    starts, ends = boundaries[0::2], boundaries[1::2]
    words_upto = np.searchsorted(starts, text_ends)
    counts = words_upto - np.concatenate((_ZERO_INT, words_upto[:-1]))
    return WordSpans(data, is_space, starts, ends, counts)


def lowered(data: np.ndarray) -> np.ndarray:
    """The bytes with ASCII A-Z lowered (+ 32), others as they are."""
    return data + ((data - np.uint8(65)) <= 25) * np.uint8(32)


def space_mask(data: np.ndarray) -> np.ndarray:
    """Which bytes of valid UTF-8 belong to a character str.split splits on."""
    mask = ((data - np.uint8(9)) <= 4) | ((data - np.uint8(28)) <= 4)  # str.split's ASCII whitespace: 9-13 and 28-32 (0x1c-0x1f too)
    # lead bytes of the 2- and 3-byte spaces (continuation bytes are < 0xC0, so these start a character)
    lead = np.flatnonzero((data == 0xC2) | ((data - np.uint8(0xE1)) <= 2))
    if lead.size:
        padded = np.concatenate((data, _PAD))
        two = (padded[lead].astype(np.int64) << 8) | padded[lead + 1]
        for size, key in ((2, two), (3, (two << 8) | padded[lead + 2])):
            found = lead[np.isin(key, _SPACE_KEYS[size])]
            for k in range(size):
                mask[found + k] = True
    return mask


def _lower_utf8(texts) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes of " ".join(texts) with non-ASCII letters lowered (uint8), and where each text's
    bytes end."""
    data, ends = _joined_batch(texts)
    high = data >= 0x80
    if not high.any():
        return data, ends
    non_ascii = data[high].tobytes()
    chars = non_ascii.decode("utf-8")
    if chars.lower() != chars:
        # non_ascii[bounds[i]:bounds[i + 1]]: text i's non-ASCII bytes
        bounds = np.searchsorted(np.flatnonzero(high), np.concatenate((_ZERO_INT, ends)))
        encoded = None
        for i in np.flatnonzero(bounds[1:] > bounds[:-1]):  # the texts with non-ASCII characters
            own = non_ascii[bounds[i] : bounds[i + 1]].decode("utf-8")
            if own.lower() != own:
                encoded = _split(data, ends) if encoded is None else encoded
                encoded[i] = encoded[i].decode("utf-8").lower().encode("utf-8")
        if encoded is not None:
            data, ends = _joined(encoded)
    return data, ends


def _joined_batch(texts) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(texts, Sequence):
        return _joined([text.encode("utf-8") for text in texts])
    import pyarrow as pa
    import pyarrow.compute as pc

    if texts.null_count:
        texts = pc.fill_null(texts, "")
    if pa.types.is_string(texts.type):
        texts = texts.cast(pa.large_string())  # one offset width below
    _, offsets, values = texts.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[texts.offset : texts.offset + len(texts) + 1]
    values = np.frombuffer(values, dtype=np.uint8) if values is not None else np.empty(0, dtype=np.uint8)
    relative = offsets - offsets[0]
    data = np.insert(values[offsets[0] : offsets[-1]], relative[1:-1], np.uint8(32))  # a space between texts
    return data, relative[1:] + np.arange(len(texts))


def _split(data: np.ndarray, ends: np.ndarray) -> list[bytes]:
    joined = data.tobytes()
    return [joined[start:end] for start, end in zip(np.concatenate((_ZERO_INT, ends[:-1] + 1)).tolist(), ends.tolist())]


def _joined(encoded: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    ends = np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)) + 1) - 1
    return np.frombuffer(b" ".join(encoded), dtype=np.uint8), ends


def shingle_word_ranges(counts: np.ndarray, shingle_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first word, last word) of every shingle, global word indices in text order, and each text's
    shingle count: the word n-grams of each text; a text shorter than n words is one shingle of all
    its words; a text without words has none."""
    word_starts = np.cumsum(counts) - counts
    shingle_counts = np.where(counts >= shingle_size, counts - shingle_size + 1, (counts > 0).astype(np.int64))
    text_of = np.repeat(np.arange(counts.size), shingle_counts)
    position = np.arange(text_of.size) - (np.cumsum(shingle_counts) - shingle_counts)[text_of]
    first = word_starts[text_of] + position
    last = first + np.minimum(counts[text_of], shingle_size) - 1
    return first, last, shingle_counts
