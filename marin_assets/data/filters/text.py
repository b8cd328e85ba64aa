"""Shared text pieces for the quality filters: one tokenisation per document, reused by all filters.

Punctuation sets are those of datatrove (datatrove/utils/text.py, Apache-2.0) so that decisions can be
compared with its filters. Words are datatrove's too: spaCy's English tokenizer, run without spaCy
(words.py).
"""

from __future__ import annotations

import re
from functools import cached_property

import numpy as np

from marin_assets.data.filters.words import split_words

__all__ = ["PUNCTUATION", "TERMINAL_PUNCTUATION", "TextView", "count_sentences", "find_duplicates",
           "retained_fraction", "split_words"]  # fmt: skip

# Characters datatrove counts as sentence-ending punctuation.
TERMINAL_PUNCTUATION = frozenset(
    '!.?\u0589\u061d\u061e\u061f\u06d4\u0700\u0701\u0702\u07f9\u0837\u0839\u083d\u083e\u0964\u0965\u104a\u104b\u1362\u1367\u1368\u166e\u1735\u1736\u17d4\u17d5\u17d6\u17d9\u17da\u1803\u1809\u1944\u1945\u1aa8\u1aa9\u1aaa\u1aab\u1b5a'
    '\u1b5b\u1b5e\u1b5f\u1b7d\u1b7e\u1c3b\u1c3c\u1c7e\u1c7f\u203c\u203d\u2047\u2048\u2049\u2e2e\u2e3c\u2e53\u2e54\u3002\ua4ff\ua60e\ua60f\ua6f3\ua6f7\ua876\ua877\ua8ce\ua8cf\ua92f\ua9c8\ua9c9\uaa5d\uaa5e\uaa5f\uaaf0\uaaf1\uabeb\ufe52\ufe56\ufe57'
    '\uff01\uff0e\uff1f\uff61\U00010a56\U00010a57\U00010f55\U00010f56\U00010f57\U00010f58\U00010f59\U00010f86\U00010f87\U00010f88\U00010f89\U00011047\U00011048\U000110be\U000110bf\U000110c0\U000110c1\U00011141\U00011142\U00011143\U000111c5\U000111c6\U000111cd\U000111de\U000111df\U00011238\U00011239\U0001123b\U0001123c\U000112a9\U0001144b\U0001144c\U000115c2\U000115c3\U000115c9\U000115ca'
    '\U000115cb\U000115cc\U000115cd\U000115ce\U000115cf\U000115d0\U000115d1\U000115d2\U000115d3\U000115d4\U000115d5\U000115d6\U000115d7\U00011641\U00011642\U0001173c\U0001173d\U0001173e\U00011944\U00011946\U00011a42\U00011a43\U00011a9b\U00011a9c\U00011c41\U00011c42\U00011ef7\U00011ef8\U00011f43\U00011f44\U00016a6e\U00016a6f\U00016af5\U00016b37\U00016b38\U00016b44\U00016e98\U0001bc9f\U0001da88'
)

_CONTROL_CHARS = "".join(chr(c) for a, b in ((0, 9), (11, 13), (13, 32), (127, 160)) for c in range(a, b))
# datatrove's PUNCTUATION_SET: symbols that do not make a word "a word".
PUNCTUATION = frozenset(
    "!/\u2014\u201d:\uff05\uff11\u3008&(\u3001\u2501\\\u3010#%\u300c\u300d\uff0c\u3011\uff1b+^]~\u201c\u300a\u201e';\u2019{|\u2236\xb4[=-`*"
    '\uff0e\uff08\u2013\uff1f\uff01\uff1a$\uff5e\xab\u3009,><\u300b)?\uff09\u3002\u2026@_."}\u25ba\xbb'
    + _CONTROL_CHARS
) | TERMINAL_PUNCTUATION

# A sentence ends at a run of terminal punctuation (not an ellipsis) followed, after a space, by more text.
_SENTENCE_END_RE = re.compile(
    r"(?:[!?\u3002\uff01\uff1f][.!?\u3002\uff01\uff1f]*|(?<!\.)\.(?!\.))(?=[^\w\s]*\s+[^\w\s]*\w)"
)


def count_sentences(line: str) -> int:
    """Sentences in one non-empty line (spaCy-sentencizer-like: a break needs text after it)."""
    return 1 + len(_SENTENCE_END_RE.findall(line))


def retained_fraction(before: str, after: str) -> float:
    """Share of `before`'s non-whitespace characters still in `after` (reflow only changes whitespace)."""
    total = sum(not c.isspace() for c in before)
    return sum(not c.isspace() for c in after) / total if total else 1.0


def find_duplicates(items: list[str]) -> tuple[int, int]:
    """(number of repeated items, characters in repeated items), counting repeats after the first."""
    seen: set[str] = set()
    dup_items = dup_chars = 0
    for item in items:
        if item in seen:
            dup_items += 1
            dup_chars += len(item)
        else:
            seen.add(item)
    return dup_items, dup_chars


_NON_SYMBOL, _HAS_LETTER = 1, 2
_MEMO_MAX = 300_000
_WORD_CLASS: dict[str, int] = {}  # word -> _NON_SYMBOL | _HAS_LETTER bits, memoised like words._CHUNK_WORDS


def _word_class(word: str) -> int:
    if len(_WORD_CLASS) >= _MEMO_MAX:
        _WORD_CLASS.clear()
    cls = _WORD_CLASS[word] = (_NON_SYMBOL if any(c not in PUNCTUATION for c in word) else 0) | (
        _HAS_LETTER if any(c.isalpha() for c in word) else 0)  # str.isalpha, as datatrove (not \w: "²" is none)
    return cls


_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


class TextView:
    """One document's text with its tokenisation computed once and shared by every filter."""

    def __init__(self, text: str):
        self.text = text
        self._ngram_cache: tuple[int, np.ndarray] | None = None  # the last (n, n-gram hashes) computed

    def rewrapped(self, text: str) -> TextView:
        """A view of `text`, which differs from this one's only in whitespace: same words, not split again."""
        view = TextView(text)
        if "words" in self.__dict__:
            view.words = self.words
        return view

    @cached_property
    def words(self) -> list[str]:
        return split_words(self.text)

    @cached_property
    def word_lengths(self) -> np.ndarray:
        return np.fromiter(map(len, self.words), dtype=np.int64, count=len(self.words))

    @cached_property
    def word_hashes(self) -> np.ndarray:
        # Python's str hash: fast and consistent within one process, which is all n-gram counting needs.
        return np.fromiter(map(hash, self.words), dtype=np.int64, count=len(self.words)).view(np.uint64)

    @cached_property
    def word_classes(self) -> np.ndarray:
        """Per word: _NON_SYMBOL (a character outside the punctuation set) | _HAS_LETTER (a letter)."""
        classes = list(map(_WORD_CLASS.get, self.words))
        if None in classes:
            classes = [_word_class(w) if c is None else c for c, w in zip(classes, self.words)]
        return np.array(classes, dtype=np.int8)

    @cached_property
    def non_symbol_mask(self) -> np.ndarray:
        """Words with at least one character outside the punctuation set."""
        return (self.word_classes & _NON_SYMBOL) != 0

    @cached_property
    def alpha_word_count(self) -> int:
        """Words containing at least one letter."""
        return int(np.count_nonzero(self.word_classes & _HAS_LETTER))

    @cached_property
    def word_char_offsets(self) -> np.ndarray:
        """Cumulative word lengths from 0: the words i..j-1 hold offsets[j] - offsets[i] characters."""
        return np.concatenate(([0], np.cumsum(self.word_lengths)))

    def ngram_hashes(self, n: int) -> np.ndarray:
        """Order-sensitive hash of each window of n words (len(words) - n + 1 values).

        hash_n[i] = hash_(n-1)[i] * M + word_hash[i + n - 1]: each n extends the last one computed.
        """
        h = self.word_hashes
        if len(h) - n + 1 <= 0:
            return np.empty(0, dtype=np.uint64)
        k, out = self._ngram_cache if self._ngram_cache and self._ngram_cache[0] <= n else (1, h)
        with np.errstate(over="ignore"):
            while k < n:
                k += 1
                m = len(h) - k + 1
                out = out[:m] * _HASH_MULTIPLIER + h[k - 1 : k - 1 + m]
        self._ngram_cache = (n, out)
        return out

    def ngram_char_lengths(self, n: int, separator: int = 0) -> np.ndarray:
        """Characters of each window of n words joined by `separator` characters."""
        csum = self.word_char_offsets
        m = max(len(self.words) - n + 1, 0)
        return csum[n : n + m] - csum[:m] + separator * (n - 1)
