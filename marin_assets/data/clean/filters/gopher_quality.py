"""Gopher quality filter (Rae et al. 2021), same rules and defaults as datatrove's."""

from __future__ import annotations

import re

from marin_assets.core.recipes import Recipe
from marin_assets.data.clean.filters.filter_base import QualityFilter, Rule, cached, frac, register
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


def _count_content_words(view: TextView) -> int:
    return int(view.non_symbol_mask.sum())


def _content_words(view: TextView, cfg) -> int:
    return cached(view, _count_content_words)


def _mean_word_length(view: TextView) -> float:
    return float(view.word_lengths[view.non_symbol_mask].mean())


def _avg_word_length(view: TextView, cfg) -> float:
    return cached(view, _mean_word_length)


def _count_lines(view: TextView) -> tuple[int, int, int]:
    return line_counts(view.text)


def _line_counts(view: TextView) -> tuple[int, int, int]:
    return cached(view, _count_lines)


@register("gopher_quality")
class GopherQuality(QualityFilter):
    Config = GopherQualityConfig
    on_by_default, default_position = True, 20
    rules = (
        Rule("gopher_short_doc", _content_words, "min_doc_words", "<"),
        Rule("gopher_long_doc", _content_words, "max_doc_words", ">"),
        Rule("gopher_short_doc", _content_words, 1, "<"),  # no content word: nothing below can be measured
        Rule("gopher_below_avg_threshold", _avg_word_length, "min_avg_word_length", "<", digits=3),
        Rule("gopher_above_avg_threshold", _avg_word_length, "max_avg_word_length", ">", digits=3),
        Rule("gopher_too_many_hashes", lambda v, c: v.text.count("#") / v.n_words, "max_symbol_word_ratio", digits=4),
        Rule("gopher_too_many_ellipsis", lambda v, c: (v.text.count("...") + v.text.count("\u2026")) / v.n_words,
             "max_symbol_word_ratio", digits=4),
        Rule("gopher_too_many_bullets", lambda v, c: frac(_line_counts(v)[1], _line_counts(v)[0]),
             "max_bullet_lines_ratio", digits=4),
        Rule("gopher_too_many_end_ellipsis", lambda v, c: frac(_line_counts(v)[2], _line_counts(v)[0]),
             "max_ellipsis_lines_ratio", digits=4),
        Rule("gopher_below_alpha_threshold", lambda v, c: v.alpha_word_count / v.n_words,
             "max_non_alpha_words_ratio", "<", digits=4),
        Rule("gopher_enough_stop_words", lambda v, c: v.distinct_words_among(c.stop_words), "min_stop_words", "<"),
    )  # fmt: skip

    def kept(self, view: TextView, cfg, stats: dict) -> TextView:
        stats["words"] = view.n_words
        return view


def check(view: TextView, cfg: GopherQualityConfig) -> str | None:
    """The first failing rule's name, or None."""
    found = GopherQuality().reject(view, cfg)
    return found.rule if found else None
