"""A document's words as numpy gathers over a per-process table of the chunks and words seen so far.

The Gopher filters need, per word, its hash, its length and its class (spacy_words.word_class), plus the
word count. A chunk's words depend on the chunk alone and chunks recur across documents, so each
distinct chunk is split once per process (fastpath/words) and each distinct word measured once; a
document then costs one dict lookup per chunk (inside `map`, in C) and array gathers, with no
Python step per word. The word strings are only built when asked for (DocumentWords.strings).

The table is append-only, so a document's ids stay valid while the table grows; when it is full a
new table replaces it between documents, and documents split earlier keep the old one. With
cleaning.yaml `words: spacy` spaCy splits each whole text (spacy_tokenizer.py) and a table of its own
only measures the words.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from marin_assets.data.clean.filters.spacy_tokenizer import spacy_words
from marin_assets.fastpath.words.spacy_words import rules, word_class

# Distinct chunks per table. A Debian worker sees ~435k distinct chunks and ~300k words in 40k documents.
_MEMO_MAX = 600_000


class _Column:
    """An append-only column: values are appended to `pending` (a list: cheap), and `values` moves them
    into a numpy array that doubles its capacity when full, once per document rather than once per value."""

    def __init__(self, dtype):
        self.data, self.size, self.pending = np.empty(1024, dtype=dtype), 0, []

    @property
    def values(self) -> np.ndarray:
        if self.pending:
            end = self.size + len(self.pending)
            if end > len(self.data):
                grown = np.empty(max(end, 2 * len(self.data)), dtype=self.data.dtype)
                grown[: self.size] = self.data[: self.size]
                self.data = grown
            self.data[self.size : end] = self.pending
            self.size, self.pending = end, []
        return self.data[: self.size]

    def __len__(self) -> int:
        return self.size + len(self.pending)


class _ChunkIds(dict):
    """chunk -> id; a missing chunk is split and added on its first lookup (so lookups can run in `map`)."""

    def __init__(self, table: WordTable):
        super().__init__()
        self.table = table

    def __missing__(self, chunk: str) -> int:
        # Inline appends (no method call per word; ids from the dicts' sizes): a Debian worker adds ~400k chunks.
        words = rules().split_chunk(chunk)  # built on the first miss, not when this module is imported
        table = self.table
        chunk_words, known = table.chunk_words.pending, table.word_ids
        table.chunk_first.pending.append(len(table.chunk_words))
        for word in words:
            found = known.get(word)
            chunk_words.append(table.new_word(word) if found is None else found)
        table.chunk_count.pending.append(len(words))
        chunk_id = self[chunk] = len(self)  # ids 0, 1, ... in the order chunks are added
        return chunk_id


class WordTable:
    def __init__(self):
        self.chunk_ids = _ChunkIds(self)
        self.chunk_first, self.chunk_count = _Column(np.int64), _Column(np.int64)
        self.chunk_words = _Column(np.int64)  # every chunk's word ids, chunk after chunk
        self.word_ids: dict[str, int] = {}
        self.words: list[str] = []
        # str hash: fast and consistent within one process, which is all n-gram counting needs
        self.word_hash, self.word_length, self.word_class = _Column(np.int64), _Column(np.int64), _Column(np.int8)

    def new_word(self, word: str) -> int:
        """Add a word not in the table; its id (its index in words and in each word column)."""
        self.words.append(word)
        self.word_hash.pending.append(hash(word))
        self.word_length.pending.append(len(word))
        self.word_class.pending.append(word_class(word))
        word_id = self.word_ids[word] = len(self.word_ids)
        return word_id

    def split(self, text: str) -> DocumentWords:
        chunks = np.fromiter(map(self.chunk_ids.__getitem__, text.split()), dtype=np.int64)
        first, count = self.chunk_first.values[chunks], self.chunk_count.values[chunks]
        total = int(count.sum())
        if total == len(chunks) and (not total or count.min() == 1):  # one word per chunk (most documents)
            return DocumentWords(self, self.chunk_words.values[first])
        ends = np.cumsum(count)  # chunk i's words are positions first[i] .. first[i] + count[i] - 1
        positions = np.arange(total) + np.repeat(first - (ends - count), count)
        return DocumentWords(self, self.chunk_words.values[positions])

    def of_words(self, words: list[str]) -> DocumentWords:
        """A document given as its words (split elsewhere), as ids into this table."""
        known, add = self.word_ids, self.new_word
        ids = [known[w] if w in known else add(w) for w in words]
        return DocumentWords(self, np.array(ids, dtype=np.int64))


class DocumentWords:
    """One document's words as ids into the table that split it."""

    __slots__ = ("table", "ids")

    def __init__(self, table: WordTable, ids: np.ndarray):
        self.table, self.ids = table, ids

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def strings(self) -> list[str]:
        return list(map(self.table.words.__getitem__, self.ids.tolist()))

    @property
    def hashes(self) -> np.ndarray:
        return self.table.word_hash.values[self.ids].view(np.uint64)

    @property
    def lengths(self) -> np.ndarray:
        return self.table.word_length.values[self.ids]

    @property
    def classes(self) -> np.ndarray:
        return self.table.word_class.values[self.ids]

    def distinct_among(self, words: Iterable[str]) -> int:
        """How many of `words` occur in the document."""
        ids = [i for w in set(words) if (i := self.table.word_ids.get(w)) is not None]
        return int(np.isin(np.array(ids, dtype=np.int64), self.ids).sum()) if ids else 0


_TABLE = WordTable()
_REFERENCE_TABLE = WordTable()  # words: spacy: spaCy splits each text, the table only measures its words once
WORDS = ("fast", "spacy")  # the recipe's words: the fast path, or spaCy's own tokenizer


def document_words(text: str, words: str = "fast") -> DocumentWords:
    """The words of split_words(text), as ids into this process's table (`words`: which splitter)."""
    global _TABLE, _REFERENCE_TABLE
    if words == "spacy":
        if len(_REFERENCE_TABLE.words) >= _MEMO_MAX:
            _REFERENCE_TABLE = WordTable()
        return _REFERENCE_TABLE.of_words(spacy_words(text))
    if words != "fast":
        raise ValueError(f"unknown words splitter {words!r}; known: {', '.join(WORDS)}")
    if len(_TABLE.chunk_ids) >= _MEMO_MAX:  # only between documents: a document's ids are all in one table
        _TABLE = WordTable()
    return _TABLE.split(text)


def split_words(text: str, words: str = "fast") -> list[str]:
    """datatrove's split_into_words(text) for English: spaCy tokens, whitespace tokens left out."""
    return document_words(text, words).strings
