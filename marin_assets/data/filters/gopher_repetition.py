"""Gopher repetition filter (Rae et al. 2021, table A1), same rules and defaults as datatrove's.

Duplicate lines/paragraphs and repeated word n-grams, as fractions of the document's characters.
N-grams are compared by vectorised hashes instead of joined strings, which is what makes it fast.
"""

from __future__ import annotations

import re

import numpy as np

from marin_assets.core.recipes import Recipe
from marin_assets.data.filters.text import TextView, find_duplicates

_PARAGRAPH_RE = re.compile(r"\n{2,}")
_LINE_RE = re.compile(r"\n+")


class GopherRepetitionConfig(Recipe):
    """Thresholds; None switches a rule off. n-gram maps are {n: max character fraction}."""

    dup_line_frac: float | None = 0.3
    dup_para_frac: float | None = 0.3
    dup_line_char_frac: float | None = 0.2
    dup_para_char_frac: float | None = 0.2
    top_n_grams: dict[int, float] = {2: 0.2, 3: 0.18, 4: 0.16}
    dup_n_grams: dict[int, float] = {5: 0.15, 6: 0.14, 7: 0.13, 8: 0.12, 9: 0.11, 10: 0.10}


def split_paragraphs(text: str) -> list[str]:
    """_PARAGRAPH_RE.split(text); without three newlines in a row every break is exactly two (str.split)."""
    return text.split("\n\n") if "\n\n\n" not in text else _PARAGRAPH_RE.split(text)


def split_lines(text: str) -> list[str]:
    """_LINE_RE.split(text) with str.split: inner empty parts dropped, a leading or trailing one kept."""
    parts = text.split("\n")
    if len(parts) < 3:
        return parts
    return [parts[0], *filter(None, parts[1:-1]), parts[-1]]


def _exceeds(value: float, threshold: float | None) -> bool:
    return threshold is not None and value > threshold


def top_ngram_chars(view: TextView, n: int) -> int:
    """Characters covered by the most frequent n-gram (its length x its count; ties: first seen)."""
    hashes = view.ngram_hashes(n)
    _, first_index, counts = np.unique(hashes, return_index=True, return_counts=True)
    top = counts.max()
    first = int(first_index[counts == top].min())
    return int(view.ngram_char_lengths(n, separator=1)[first]) * int(top)


def previous_occurrence(hashes: np.ndarray) -> np.ndarray:
    """For each position, the last earlier position with the same hash (-1: none)."""
    order = np.argsort(hashes, kind="stable")  # equal hashes stay in position order
    same = hashes[order[1:]] == hashes[order[:-1]]
    prev = np.full(len(hashes), -1, dtype=np.int64)
    prev[order[1:][same]] = order[:-1][same]
    return prev


def duplicated_ngram_chars(view: TextView, n: int, stop_above: float | None = None) -> int:
    """Characters in repeated n-grams, scanning left to right and skipping past each repeat.

    The scan (datatrove's find_all_duplicate) remembers the n-grams it visits; a repeat's n words
    are skipped, so the n-grams starting inside it are never remembered. Only positions whose hash
    occurred before can be repeats, so just those are visited, in order: one is a repeat when an
    earlier occurrence was remembered (neither a repeat nor skipped). stop_above: return as soon as
    the repeated characters exceed this fraction of the text (the rule has tripped).
    """
    hashes = view.ngram_hashes(n)
    prev = previous_occurrence(hashes)
    candidates = np.flatnonzero(prev >= 0).tolist()
    if not candidates:
        return 0
    prev_of, offsets = prev.tolist(), view.word_char_offsets
    forgotten: set[int] = set()  # repeats and the positions their skips jumped over
    repeated = idx = 0
    for pos in candidates:
        if pos < idx:
            continue
        earlier = prev_of[pos]
        while earlier >= 0 and earlier in forgotten:
            earlier = prev_of[earlier]
        if earlier < 0:
            continue  # first remembered occurrence
        repeated += int(offsets[pos + n] - offsets[pos])
        forgotten.update(range(pos, pos + n))
        idx = pos + n
        if stop_above is not None and repeated / len(view.text) > stop_above:  # the test check() makes
            break
    return repeated


def check(view: TextView, cfg: GopherRepetitionConfig) -> str | None:
    """The first failing rule's name, or None."""
    text = view.text
    if not text:
        return "empty"
    paragraphs = split_paragraphs(text.strip())
    dup_paragraphs, dup_chars = find_duplicates(paragraphs)
    if _exceeds(dup_paragraphs / len(paragraphs), cfg.dup_para_frac):
        return "dup_para_frac"
    if _exceeds(dup_chars / len(text), cfg.dup_para_char_frac):
        return "dup_para_char_frac"

    lines = split_lines(text)
    dup_lines, dup_chars = find_duplicates(lines)
    if _exceeds(dup_lines / len(lines), cfg.dup_line_frac):
        return "dup_line_frac"
    if _exceeds(dup_chars / len(text), cfg.dup_line_char_frac):
        return "dup_line_char_frac"

    n_words = len(view.words)
    for n, frac in cfg.top_n_grams.items():
        if n_words >= n and top_ngram_chars(view, n) / len(text) > frac:
            return f"top_{n}_gram"

    no_repeats_from = None  # once no n-gram repeats, no longer n-gram can repeat either
    for n, frac in cfg.dup_n_grams.items():
        if no_repeats_from is not None and n >= no_repeats_from:
            continue
        repeated = duplicated_ngram_chars(view, n, stop_above=frac)
        if repeated == 0:
            no_repeats_from = n
        elif repeated / len(text) > frac:
            return f"duplicated_{n}_n_grams"
    return None
