"""Gopher quality filter (Rae et al. 2021), same rules and defaults as datatrove's."""

from __future__ import annotations

import re

from marin_assets.core.recipes import Recipe
from marin_assets.data.clean.filters.text import TextView

STOP_WORDS = ("the", "be", "to", "of", "and", "that", "have", "with")


class GopherQualityConfig(Recipe):
    """Thresholds; None switches a rule off."""

    min_doc_words: int | None = 50
    max_doc_words: int | None = 100_000
    min_avg_word_length: float | None = 3
    max_avg_word_length: float | None = 10
    max_symbol_word_ratio: float | None = 0.1
    max_bullet_lines_ratio: float | None = 0.9
    max_ellipsis_lines_ratio: float | None = 0.3
    max_non_alpha_words_ratio: float | None = 0.8  # minimum share of words with a letter (datatrove's name)
    min_stop_words: int | None = 2
    stop_words: tuple[str, ...] = STOP_WORDS


# Line breaks of str.splitlines other than "\n": a text with none (every normalised text) is counted by regex.
_OTHER_LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_BULLET_AFTER_BREAK = re.compile(r"\n[^\S\n]*[\u2022-]")  # a line, after its leading blanks, starting with one
_FIRST_LINE_BULLET = re.compile(r"[^\S\n]*[\u2022-]")
# One regex per ellipsis: one starting with a literal skips ahead to it, an alternation tries every character.
# A line ends with one or the other, so the two counts add up.
_ELLIPSES_AT_LINE_END = (re.compile(r"\.\.\.[^\S\n]*(?:\n|\Z)"), re.compile(r"\u2026[^\S\n]*(?:\n|\Z)"))


def line_counts(text: str) -> tuple[int, int, int]:
    """(lines, lines starting with a bullet, lines ending with an ellipsis), blanks around them aside, as
    datatrove counts them over text.splitlines() (an empty text is one line). The regexes find a line's
    start or end with a literal ahead of it, which a per-line Python loop cannot match for speed."""
    if any(char in text for char in _OTHER_LINE_BREAKS):
        lines = text.splitlines() or [""]
        bullets = sum(1 for line in lines if line.lstrip().startswith(("\u2022", "-")))
        return len(lines), bullets, sum(1 for line in lines if line.rstrip().endswith(("...", "\u2026")))
    n_lines = max(1, text.count("\n") + (not text.endswith("\n")))
    bullets = len(_BULLET_AFTER_BREAK.findall(text)) + bool(_FIRST_LINE_BULLET.match(text))
    return n_lines, bullets, sum(len(ellipsis.findall(text)) for ellipsis in _ELLIPSES_AT_LINE_END)


def check(view: TextView, cfg: GopherQualityConfig) -> str | None:
    """The first failing rule's name, or None."""
    text = view.text
    n_words = view.n_words
    mask = view.non_symbol_mask
    n_content_words = int(mask.sum())
    if cfg.min_doc_words is not None and n_content_words < cfg.min_doc_words:
        return "gopher_short_doc"
    if cfg.max_doc_words is not None and n_content_words > cfg.max_doc_words:
        return "gopher_long_doc"
    if n_words == 0 or n_content_words == 0:
        return "gopher_short_doc"

    avg_word_length = float(view.word_lengths[mask].mean())
    if cfg.min_avg_word_length is not None and avg_word_length < cfg.min_avg_word_length:
        return "gopher_below_avg_threshold"
    if cfg.max_avg_word_length is not None and avg_word_length > cfg.max_avg_word_length:
        return "gopher_above_avg_threshold"

    if cfg.max_symbol_word_ratio is not None:
        if text.count("#") / n_words > cfg.max_symbol_word_ratio:
            return "gopher_too_many_hashes"
        if (text.count("...") + text.count("\u2026")) / n_words > cfg.max_symbol_word_ratio:
            return "gopher_too_many_ellipsis"

    n_lines, bullets, ellipsis = line_counts(text)
    if cfg.max_bullet_lines_ratio is not None and bullets / n_lines > cfg.max_bullet_lines_ratio:
        return "gopher_too_many_bullets"
    if cfg.max_ellipsis_lines_ratio is not None and ellipsis / n_lines > cfg.max_ellipsis_lines_ratio:
        return "gopher_too_many_end_ellipsis"

    if cfg.max_non_alpha_words_ratio is not None and view.alpha_word_count / n_words < cfg.max_non_alpha_words_ratio:
        return "gopher_below_alpha_threshold"

    if cfg.min_stop_words is not None and view.distinct_words_among(cfg.stop_words) < cfg.min_stop_words:
        return "gopher_enough_stop_words"
    return None
