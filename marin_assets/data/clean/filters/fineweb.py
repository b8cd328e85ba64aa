"""FineWeb quality filter (Penedo et al. 2024), same rules and defaults as datatrove's."""

from __future__ import annotations

from marin_assets.core.recipes import Recipe
from marin_assets.data.clean.filters.text import TERMINAL_PUNCTUATION, TextView, find_duplicates


class FineWebConfig(Recipe):
    line_punct_thr: float = 0.12
    line_punct_exclude_zero: bool = False
    short_line_thr: float = 0.67
    short_line_length: int = 30
    char_duplicates_ratio: float = 0.01
    new_line_ratio: float = 0.3


def check(text: str | TextView, cfg: FineWebConfig) -> str | None:
    """The first failing rule's name, or None. A TextView shares its words with the other filters."""
    view = text if isinstance(text, TextView) else TextView(text)
    text = view.text
    lines = [line for line in text.split("\n") if line.strip() != ""]
    if not lines:
        return "empty"
    ratio = sum(1 for line in lines if line[-1] in TERMINAL_PUNCTUATION) / len(lines)
    if ratio < cfg.line_punct_thr and not (ratio == 0 and cfg.line_punct_exclude_zero):
        return "line_punct_ratio"
    if sum(1 for line in lines if len(line) <= cfg.short_line_length) / len(lines) > cfg.short_line_thr:
        return "short_line_ratio"
    if find_duplicates(lines)[1] / len(text.replace("\n", "")) > cfg.char_duplicates_ratio:
        return "char_dup_ratio"
    n_words = view.n_words
    if text.count("\n") / max(n_words, 1) > cfg.new_line_ratio:
        return "list_ratio"
    return None
