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


def _exceeds(value: float, threshold: float | None) -> bool:
    return threshold is not None and value > threshold


def top_ngram_chars(view: TextView, n: int) -> int:
    """Characters covered by the most frequent n-gram (its length x its count; ties: first seen)."""
    hashes = view.ngram_hashes(n)
    _, first_index, counts = np.unique(hashes, return_index=True, return_counts=True)
    top = counts.max()
    first = int(first_index[counts == top].min())
    return int(view.ngram_char_lengths(n, separator=1)[first]) * int(top)


def duplicated_ngram_chars(view: TextView, n: int) -> int:
    """Characters in repeated n-grams, scanning left to right and skipping past each repeat."""
    hashes = view.ngram_hashes(n)
    if len(np.unique(hashes)) == len(hashes):
        return 0
    lengths = view.ngram_char_lengths(n).tolist()
    seen: set[int] = set()
    repeated = idx = 0
    values = hashes.tolist()
    while idx < len(values):
        if values[idx] in seen:
            repeated += lengths[idx]
            idx += n
        else:
            seen.add(values[idx])
            idx += 1
    return repeated


def check(view: TextView, cfg: GopherRepetitionConfig) -> str | None:
    """The first failing rule's name, or None."""
    text = view.text
    if not text:
        return "empty"
    paragraphs = _PARAGRAPH_RE.split(text.strip())
    dup_paragraphs, dup_chars = find_duplicates(paragraphs)
    if _exceeds(dup_paragraphs / len(paragraphs), cfg.dup_para_frac):
        return "dup_para_frac"
    if _exceeds(dup_chars / len(text), cfg.dup_para_char_frac):
        return "dup_para_char_frac"

    lines = _LINE_RE.split(text)
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
        repeated = duplicated_ngram_chars(view, n)
        if repeated == 0:
            no_repeats_from = n
        elif repeated / len(text) > frac:
            return f"duplicated_{n}_n_grams"
    return None
