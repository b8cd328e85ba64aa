"""Run the quality filters in their published order; the first failing rule rejects the document.

Order as in FineWeb's pipeline: Gopher repetition, Gopher quality, C4 (which also drops lines), FineWeb.
Hard-wrapped text is reflowed into paragraphs first (reflow.py), so every filter sees prose as prose.
Rule names are "<filter>:<rule>", e.g. "gopher_repetition:top_2_gram". A check returns the rule
name, or (rule, value) to report the value that tripped it; otherwise rule_values measures it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from marin_assets.core.recipes import Recipe
from marin_assets.data.clean.filters import c4, fineweb, gopher_quality, gopher_repetition
from marin_assets.data.clean.filters.c4 import C4Config
from marin_assets.data.clean.filters.fineweb import FineWebConfig
from marin_assets.data.clean.filters.gopher_quality import GopherQualityConfig
from marin_assets.data.clean.filters.gopher_repetition import GopherRepetitionConfig
from marin_assets.data.clean.filters.rule_values import measured_value
from marin_assets.data.clean.filters.reflow import ReflowConfig, reflow
from marin_assets.data.clean.filters.text import TextView


class FilterSettings(Recipe):
    """Which filters run (null: off) and their thresholds."""

    reflow: ReflowConfig | None = ReflowConfig()
    gopher_repetition: GopherRepetitionConfig | None = GopherRepetitionConfig()
    gopher_quality: GopherQualityConfig | None = GopherQualityConfig()
    c4: C4Config | None = C4Config()
    fineweb: FineWebConfig | None = FineWebConfig()


@dataclass(frozen=True)
class FilterOutcome:
    reason: str | None  # None: the document is kept
    text: str  # the text after reflow and line-level rules (C4 drops lines); the input text when rejected
    stats: dict = field(default_factory=dict)
    value: float | str | None = None  # what tripped the rule (for the rejected examples users see)

    @property
    def kept(self) -> bool:
        return self.reason is None


def run_filters(text: str, settings: FilterSettings, words: str = "fast") -> FilterOutcome:
    """words: the word splitter (cleaning.yaml `words`): fast (fastpath/words) or spacy (spaCy itself)."""
    original = text
    stats = {"chars": len(text)}
    if settings.reflow is not None:
        text = reflow(text, settings.reflow)
        stats["reflowed_lines"] = original.count("\n") - text.count("\n")
    view = TextView(text, words)

    def rejected(name: str, trip: str | tuple) -> FilterOutcome:
        rule, value = trip if isinstance(trip, tuple) else (trip, None)  # value None: measured below
        reason = f"{name}:{rule}"
        if value is None:  # `text`: what this filter saw (after reflow and C4's lines)
            value = measured_value(reason, text, settings, view if text == view.text else TextView(text, words))
        return FilterOutcome(reason, original, stats, value)

    if settings.gopher_repetition is not None:
        if rule := gopher_repetition.check_with_value(view, settings.gopher_repetition):
            return rejected("gopher_repetition", rule)
    if settings.gopher_quality is not None:
        if rule := gopher_quality.check(view, settings.gopher_quality):
            return rejected("gopher_quality", rule)
    if settings.gopher_repetition is not None or settings.gopher_quality is not None:
        stats["words"] = view.n_words
    if settings.c4 is not None:
        lines = c4.filter_lines(text, settings.c4)
        stats.update(line_removed_chars=lines.removed, line_removed_frac=round(lines.removed_frac, 4))
        rule, text = lines.rule, lines.text
        if rule:
            return rejected("c4", rule)
        # no character removed: only blank lines and the lines' outer whitespace went, the words stay
        view = view.rewrapped(text) if not lines.removed else TextView(text, words)
    if settings.fineweb is not None:
        if rule := fineweb.check(view, settings.fineweb):
            return rejected("fineweb", rule)
    stats["kept_chars"] = len(text)
    return FilterOutcome(None, text, stats)
