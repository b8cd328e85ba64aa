"""Shared text pieces for the quality filters: one tokenisation per document, reused by all filters.

Punctuation sets are those of datatrove (punctuation.py) so that decisions can be compared with its
filters. Words are datatrove's too: spaCy's English tokenizer, run without spaCy (fastpath/words) or,
with `words: spacy`, by spaCy itself (spacy_tokenizer.py).
"""

from __future__ import annotations

import re
from functools import cached_property

import numpy as np

from marin_assets.data.clean.filters.punctuation import PUNCTUATION, TERMINAL_PUNCTUATION
from marin_assets.data.clean.filters.word_table import DocumentWords, document_words, split_words
from marin_assets.fastpath.words.spacy_words import HAS_LETTER, NON_SYMBOL

__all__ = ["PUNCTUATION", "TERMINAL_PUNCTUATION", "TextView", "count_sentences", "find_duplicates",
           "retained_fraction", "split_words"]  # fmt: skip

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
    if len(set(items)) == len(items):  # no repeat (most texts): one pass in C
        return 0, 0
    seen: set[str] = set()
    dup_items = dup_chars = 0
    for item in items:
        if item in seen:
            dup_items += 1
            dup_chars += len(item)
        else:
            seen.add(item)
    return dup_items, dup_chars


HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


class TextView:
    """One document's text with its tokenisation computed once and shared by every filter."""

    def __init__(self, text: str, words: str = "fast"):
        """words: the splitter (cleaning.yaml `words`): `fast` (fastpath/words) or `spacy` (spaCy itself)."""
        self.text, self.words_splitter = text, words
        self._ngram_cache: tuple[int, np.ndarray] | None = None  # the last (n, n-gram hashes) computed
        self.shared: dict = {}  # per-document intermediates several filter rules share (filter_base.cached)

    def rewrapped(self, text: str) -> TextView:
        """A view of `text`, which differs from this one's only in whitespace: same words, not split again."""
        view = TextView(text, self.words_splitter)
        if "_split" in self.__dict__:
            view._split = self._split
        return view

    @cached_property
    def _split(self) -> DocumentWords:
        return document_words(self.text, self.words_splitter)

    @cached_property
    def words(self) -> list[str]:
        return self._split.strings

    @property
    def n_words(self) -> int:
        return len(self._split)

    @cached_property
    def word_lengths(self) -> np.ndarray:
        return self._split.lengths

    @cached_property
    def word_hashes(self) -> np.ndarray:
        return self._split.hashes

    @cached_property
    def word_classes(self) -> np.ndarray:
        """Per word: NON_SYMBOL (a character outside the punctuation set) | HAS_LETTER (a letter)."""
        return self._split.classes

    @cached_property
    def non_symbol_mask(self) -> np.ndarray:
        """Words with at least one character outside the punctuation set."""
        return (self.word_classes & NON_SYMBOL) != 0

    @cached_property
    def alpha_word_count(self) -> int:
        """Words containing at least one letter."""
        return int(np.count_nonzero(self.word_classes & HAS_LETTER))

    def distinct_words_among(self, words: tuple[str, ...]) -> int:
        """How many of `words` occur in the text (as words)."""
        return self._split.distinct_among(words)

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
        while k < n:  # unsigned array arithmetic wraps around silently (no overflow check in numpy)
            k += 1
            m = len(h) - k + 1
            out = out[:m] * HASH_MULTIPLIER + h[k - 1 : k - 1 + m]
        self._ngram_cache = (n, out)
        return out

    def ngram_char_lengths(self, n: int, separator: int = 0) -> np.ndarray:
        """Characters of each window of n words joined by `separator` characters."""
        csum = self.word_char_offsets
        m = max(self.n_words - n + 1, 0)
        return csum[n : n + m] - csum[:m] + separator * (n - 1)
