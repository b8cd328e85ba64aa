"""Whitespace-separated words of many lower-cased texts at once, as byte spans of one UTF-8 buffer.

The words are str.split's words of text.lower() (what the dedup precision check and datasketch users
shingle), found with numpy over the whole batch: the texts are joined with a space, so no word spans
two texts. ASCII letters are lowered with a byte table; str.lower, slow on non-ASCII strings, runs
only on texts whose non-ASCII characters change case. Those characters' UTF-8 bytes are all >= 0x80,
so the batch's non-ASCII bytes alone decode to its non-ASCII characters. A text with non-ASCII
whitespace (no-break space, U+2000..., which str.split splits on) is rewritten with ASCII spaces
between its words.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

IS_SPACE = np.zeros(256, dtype=bool)
IS_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True  # str.split's ASCII whitespace (0x1c-0x1f too)
LOWER = np.arange(256, dtype=np.uint8)  # byte -> lower-cased ASCII byte
LOWER[65:91] += 32
_TRUE = np.ones(1, dtype=bool)
_ZERO_INT = np.zeros(1, dtype=np.int64)


class WordSpans(NamedTuple):
    """data: the joined UTF-8 bytes (ASCII letters not yet lowered; apply LOWER); word w is
    data[starts[w]:ends[w]]; text i has counts[i] words, in order, after those of texts < i."""

    data: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    counts: np.ndarray


def word_spans(texts: Sequence[str]) -> WordSpans:
    data, text_ends = _lower_utf8(texts)
    if data.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return WordSpans(data, empty, empty, np.zeros(len(texts), dtype=np.int64))
    # word boundaries alternate start, end, start, ... between padding spaces
    padded = np.concatenate((_TRUE, IS_SPACE[data], _TRUE))
    boundaries = np.flatnonzero(padded[:-1] != padded[1:])
    starts, ends = boundaries[0::2], boundaries[1::2]
    words_upto = np.searchsorted(starts, text_ends)
    counts = words_upto - np.concatenate((_ZERO_INT, words_upto[:-1]))
    return WordSpans(data, starts, ends, counts)


def _lower_utf8(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes of " ".join(texts) with non-ASCII case and whitespace handled (uint8), and where
    each text's bytes end."""
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
