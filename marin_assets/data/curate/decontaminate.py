"""Decontamination: 13-gram overlap of normalised words between documents and the eval sets (pure).

As in GPT-3 / Marin: words are lower-cased with punctuation stripped, and a document overlaps an eval
set when it shares an n-gram (default 13 words) with it. An eval set's index is the sorted array of
its n-grams' 64-bit hashes, built once per eval-set version (the eval_set asset) and broadcast to the
Spark workers. A task set's index (data.task_set_indexes) holds hashes of several lengths: each item
shorter than n words whole, at its own length. Policy `drop` rejects an overlapping document;
`remove_spans` cuts the overlapping words out and rejects the document only when too little of it
remains. The curation step that runs it per document, with hits per eval item, is data.decontamination_step.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from marin_assets.data.curate.sorted_membership import in_sorted

REASON_PREFIX = "decontamination"
_TOKEN = re.compile(r"\S+")
_PUNCT = re.compile(r"[\W_]+")  # everything but letters and digits (Unicode-aware)
_BASE = np.uint64(0x100000001B3)


_MEMO_MAX = 500_000  # distinct tokens remembered per process


class _NormalizedTokens(dict):
    """token -> its normalised word, computed on the first lookup (so lookups can run inside `map`)."""

    def __missing__(self, token: str) -> str:
        if len(self) >= _MEMO_MAX:
            self.clear()
        word = self[token] = _PUNCT.sub("", token.lower())
        return word


_NORMALIZED = _NormalizedTokens()


def normalized_tokens(text: str) -> list[tuple[int, int, str]]:
    """(start, end, word) of every whitespace token that keeps a letter or digit once normalised."""
    out = []
    for m in _TOKEN.finditer(text):
        if word := _NORMALIZED[m.group()]:
            out.append((m.start(), m.end(), word))
    return out


def normalized_words(text: str) -> list[str]:
    """The words of normalized_tokens, without positions (str.split splits where \\S+ ends: str.isspace)."""
    return list(filter(None, map(_NORMALIZED.__getitem__, text.split())))


@lru_cache(maxsize=1 << 16)
def _word_hash(word: str) -> int:
    return int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")


def ngram_hashes(words: list[str], n: int) -> np.ndarray:
    """uint64 hash of each run of n consecutive words (empty when there are fewer than n)."""
    if len(words) < n:
        return np.empty(0, dtype=np.uint64)
    h = np.fromiter(map(_word_hash, words), dtype=np.uint64, count=len(words))
    m = len(words) - n + 1
    with np.errstate(over="ignore"):
        out = h[:m].copy()
        for k in range(1, n):
            out = out * _BASE + h[k : k + m]
    return out


def ngram_hashes_by_length(words: list[str], lengths: Iterable[int]) -> dict[int, np.ndarray]:
    """{n: ngram_hashes(words, n)} for each n in lengths, in one pass: the (k+1)-gram hashes extend the
    k-gram ones by a word, so all lengths up to 13 cost what the 13-gram hashes alone cost."""
    wanted = {n for n in lengths if 0 < n <= len(words)}
    if not wanted:
        return {}
    h = np.fromiter(map(_word_hash, words), dtype=np.uint64, count=len(words))
    out, grams = {}, h
    with np.errstate(over="ignore"):
        for k in range(1, max(wanted) + 1):
            if k > 1:  # grams[i] = hash of words i .. i + k - 1, as ngram_hashes computes it
                grams = grams[: len(words) - k + 1] * _BASE + h[k - 1 :]
            if k in wanted:
                out[k] = grams
    return out


def build_index(texts: Iterable[str], n: int) -> np.ndarray:
    """The sorted unique n-gram hashes of an eval set's texts (uint64)."""
    parts = [ngram_hashes(normalized_words(t), n) for t in texts]
    return np.unique(np.concatenate(parts)) if parts else np.empty(0, dtype=np.uint64)


@dataclass
class Decontaminated:
    text: str
    matched_ngrams: dict[str, int] = field(default_factory=dict)  # eval set -> overlapping n-grams
    removed_words: int = 0
    reject: str | None = None


def by_length(value: np.ndarray | Mapping[int, np.ndarray], ngram: int) -> Mapping[int, np.ndarray]:
    """An eval set's index as {n-gram length: sorted hashes}: a plain array holds `ngram`-grams only; a task
    set of short items (data.task_set_indexes) holds each item whole, at n = min(ngram, its length)."""
    return {ngram: value} if isinstance(value, np.ndarray) else value


def decontaminate(
    text: str, index: Mapping[str, np.ndarray | Mapping[int, np.ndarray]], *, ngram: int = 13,
    policy: str = "remove_spans", min_remaining_fraction: float = 0.5,
) -> Decontaminated:
    """Check one document against every eval set's index; drop it or cut out the overlapping words."""
    if not index:
        return Decontaminated(text)
    indexes = {name: by_length(index[name], ngram) for name in sorted(index)}
    words = normalized_words(text)
    grams = ngram_hashes_by_length(words, {n for per_length in indexes.values() for n in per_length})
    if not grams:
        return Decontaminated(text)
    covered = np.zeros(len(words), dtype=bool)
    matched = {}
    for name, per_length in indexes.items():
        found = 0
        for n, hashes in per_length.items():
            if n not in grams or hashes.size == 0:
                continue
            hit = in_sorted(grams[n], hashes)
            found += int(hit.sum())
            for start in np.flatnonzero(hit):  # an n-gram covers words start .. start + n - 1
                covered[start : start + n] = True
        if found:
            matched[name] = found
    if not matched:
        return Decontaminated(text)
    worst = max(sorted(matched), key=matched.get)
    reason = f"{REASON_PREFIX}:{worst}"
    removed = int(covered.sum())
    if policy == "drop" or len(words) - removed < min_remaining_fraction * len(words):
        return Decontaminated(text, matched, removed, reject=reason)
    # the words' positions, only for the rare document that overlaps
    return Decontaminated(_cut(text, normalized_tokens(text), covered), matched, removed)


def _cut(text: str, tokens: list[tuple[int, int, str]], covered: np.ndarray) -> str:
    """text without each run of covered tokens (and the blanks after it)."""
    pieces, pos, i = [], 0, 0
    while i < len(tokens):
        if not covered[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(tokens) and covered[j + 1]:
            j += 1
        start, end = tokens[i][0], tokens[j][1]
        while end < len(text) and text[end] in " \t":
            end += 1
        pieces.append(text[pos:start])
        pos, i = end, j + 1
    pieces.append(text[pos:])
    return "".join(pieces).strip()
