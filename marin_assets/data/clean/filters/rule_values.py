"""The measured value behind a rejection, for the examples users see ("top_2_gram: 0.31").

A filter may report its value itself (check returns (rule, value)); for filters that return only
a rule name this recomputes, with the filters' own helpers, the quantity the rule compared with
its threshold. Run for rejected documents only, so its cost does not matter.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from marin_assets.data.clean.filters import c4
from marin_assets.data.clean.filters.gopher_repetition import duplicated_ngram_chars, top_ngram_chars
from marin_assets.data.clean.filters.text import TERMINAL_PUNCTUATION, TextView, count_sentences, find_duplicates

_PARAGRAPHS, _LINES = re.compile(r"\n{2,}"), re.compile(r"\n+")


def _frac(count: float, total: float) -> float:
    return round(count / total, 4) if total else 0.0


def _dup(split: re.Pattern, by_chars: bool) -> Callable[[TextView, object], float]:
    def measure(view: TextView, settings) -> float:
        parts = split.split(view.text.strip() if split is _PARAGRAPHS else view.text)
        count, chars = find_duplicates(parts)
        return _frac(chars, len(view.text)) if by_chars else _frac(count, len(parts))

    return measure


def _ngram(n: int, top: bool) -> Callable[[TextView, object], float]:
    def measure(view: TextView, settings) -> float:
        chars = top_ngram_chars(view, n) if top else duplicated_ngram_chars(view, n)
        return _frac(chars, len(view.text))

    return measure


def _lines(view: TextView) -> list[str]:
    return view.text.splitlines() or [""]


def _content_words(view: TextView, settings) -> float:
    return int(view.non_symbol_mask.sum())


def _fineweb_lines(view: TextView) -> list[str]:
    return [line for line in view.text.split("\n") if line.strip()] or [""]


def _c4_sentences(text: str, cfg) -> int:
    """Sentences in the lines C4 keeps (its check stops counting at the minimum, so count here)."""
    _, kept = c4.check(text, cfg.model_copy(update={"min_num_sentences": -1}))
    return sum(count_sentences(line) for line in kept.splitlines())


MEASURES: dict[str, Callable[[TextView, object], float]] = {
    # an empty text trips these: shown as the characters / non-blank lines there were (0)
    "gopher_repetition:empty": lambda v, s: len(v.text),
    "fineweb:empty": lambda v, s: sum(1 for line in v.text.split("\n") if line.strip()),
    "gopher_repetition:dup_para_frac": _dup(_PARAGRAPHS, False),
    "gopher_repetition:dup_para_char_frac": _dup(_PARAGRAPHS, True),
    "gopher_repetition:dup_line_frac": _dup(_LINES, False),
    "gopher_repetition:dup_line_char_frac": _dup(_LINES, True),
    **{f"gopher_repetition:top_{n}_gram": _ngram(n, True) for n in range(2, 5)},
    **{f"gopher_repetition:duplicated_{n}_n_grams": _ngram(n, False) for n in range(5, 11)},
    "gopher_quality:gopher_short_doc": _content_words,
    "gopher_quality:gopher_long_doc": _content_words,
    "gopher_quality:gopher_below_avg_threshold": lambda v, s: round(float(v.word_lengths[v.non_symbol_mask].mean()), 3),
    "gopher_quality:gopher_above_avg_threshold": lambda v, s: round(float(v.word_lengths[v.non_symbol_mask].mean()), 3),
    "gopher_quality:gopher_too_many_hashes": lambda v, s: _frac(v.text.count("#"), v.n_words),
    "gopher_quality:gopher_too_many_ellipsis": lambda v, s: _frac(v.text.count("...") + v.text.count("\u2026"), v.n_words),
    "gopher_quality:gopher_too_many_bullets": lambda v, s: _frac(
        sum(line.lstrip().startswith(("\u2022", "-")) for line in _lines(v)), len(_lines(v))),
    "gopher_quality:gopher_too_many_end_ellipsis": lambda v, s: _frac(
        sum(line.rstrip().endswith(("...", "\u2026")) for line in _lines(v)), len(_lines(v))),
    "gopher_quality:gopher_below_alpha_threshold": lambda v, s: _frac(v.alpha_word_count, v.n_words),
    "gopher_quality:gopher_enough_stop_words": lambda v, s: v.distinct_words_among(s.gopher_quality.stop_words),
    "c4:too_few_sentences": lambda v, s: _c4_sentences(v.text, s.c4),
    "fineweb:short_line_ratio": lambda v, s: _frac(
        sum(len(line) <= s.fineweb.short_line_length for line in _fineweb_lines(v)), len(_fineweb_lines(v))),
    "fineweb:line_punct_ratio": lambda v, s: _frac(
        sum(line[-1] in TERMINAL_PUNCTUATION for line in _fineweb_lines(v) if line), len(_fineweb_lines(v))),
    "fineweb:char_dup_ratio": lambda v, s: _frac(find_duplicates(_fineweb_lines(v))[1], len(v.text.replace("\n", ""))),
    "fineweb:list_ratio": lambda v, s: _frac(v.text.count("\n"), max(v.n_words, 1)),
}  # fmt: skip


def measured_value(rule: str, text: str, settings, view: TextView | None = None) -> float | None:
    """The value `rule` compared with its threshold on `text` (None: no measure known for the rule).

    settings: the FilterSettings the filters ran with (a few measures depend on a parameter);
    view: the filters' TextView of `text`, if there is one (its words are not split again).
    """
    measure = MEASURES.get(rule)
    if measure is None:
        return None
    try:
        return measure(view if view is not None else TextView(text), settings)
    except (ValueError, ZeroDivisionError, IndexError):  # a degenerate text: show no value rather than fail
        return None
