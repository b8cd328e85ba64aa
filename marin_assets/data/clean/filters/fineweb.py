"""FineWeb quality filter (Penedo et al. 2024), same rules and defaults as datatrove's."""

from __future__ import annotations

from marin_assets.core.recipes import Recipe
from marin_assets.data.clean.filters.filter_base import QualityFilter, Rule, cached, register
from marin_assets.data.clean.filters.text import TERMINAL_PUNCTUATION, TextView, find_duplicates


class FineWebConfig(Recipe):
    line_punct_thr: float = 0.12
    line_punct_exclude_zero: bool = False
    short_line_thr: float = 0.67
    short_line_length: int = 30
    char_duplicates_ratio: float = 0.01
    new_line_ratio: float = 0.3


def _non_blank_lines(view: TextView) -> list[str]:
    return [line for line in view.text.split("\n") if line.strip() != ""]


def _lines(view: TextView) -> list[str]:
    return cached(view, _non_blank_lines)


def _share_ending_in_punctuation(view: TextView) -> float:
    lines = _lines(view)
    return sum(1 for line in lines if line[-1] in TERMINAL_PUNCTUATION) / len(lines)


def _punct_ratio(view: TextView, cfg) -> float:
    return cached(view, _share_ending_in_punctuation)


@register("fineweb")
class FineWeb(QualityFilter):
    Config = FineWebConfig
    on_by_default, default_position = True, 40
    rules = (
        Rule("empty", lambda v, c: len(_lines(v)), 1, "<"),
        Rule("line_punct_ratio", _punct_ratio, "line_punct_thr", "<", digits=4,
             could_trip=lambda v, c, limit: not (c.line_punct_exclude_zero and _punct_ratio(v, c) == 0)),
        Rule("short_line_ratio", lambda v, c: sum(1 for line in _lines(v) if len(line) <= c.short_line_length)
             / len(_lines(v)), "short_line_thr", digits=4),
        Rule("char_dup_ratio", lambda v, c: find_duplicates(_lines(v))[1] / len(v.text.replace("\n", "")),
             "char_duplicates_ratio", digits=4),
        Rule("list_ratio", lambda v, c: v.text.count("\n") / max(v.n_words, 1), "new_line_ratio", digits=4),
    )  # fmt: skip


def check(text: str | TextView, cfg: FineWebConfig) -> str | None:
    """The first failing rule's name, or None. A TextView shares its words with the other filters."""
    found = FineWeb().reject(text if isinstance(text, TextView) else TextView(text), cfg)
    return found.rule if found else None
