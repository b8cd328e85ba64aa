"""C4 quality filter (Raffel et al. 2020), same rules as datatrove's C4QualityFilter.

Line rules drop lines (the kept lines become the document's text); document rules reject it.
Every character a line rule removes is counted under the rule's name, and a document that would
lose more than `max_removed_frac` of its characters is rejected (`removed_char_frac`) instead of
being kept as fragments: that rule is ours, not C4's (datatrove has no equivalent).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import NamedTuple

from marin_assets.core.recipes import Recipe
from marin_assets.data.clean.filters.filter_base import QualityFilter, Rule, cached, register
from marin_assets.data.clean.filters.text import TextView, count_sentences

CITATION_RE = re.compile(r"\[\d*]|\[edit]|\[citation needed]")
END_PUNCTUATION = (".", "?", "!", '"', "'")
POLICY_SUBSTRINGS = ("terms of use", "privacy policy", "cookie policy", "uses cookies", "use of cookies", "use cookies")
REMOVED_CHAR_FRAC = "removed_char_frac"


class C4Config(Recipe):
    """Rule switches and thresholds; -1 (None for ours) switches a numeric rule off (as in C4 / datatrove).

    filter_no_terminal_punct is off as in FineWeb's pipeline (C4's and datatrove's class default is on).
    """

    filter_no_terminal_punct: bool = False
    remove_citations: bool = True
    min_num_sentences: int = 5
    min_words_per_line: int = 3
    max_word_length: int = 1000
    filter_lorem_ipsum: bool = True
    filter_javascript: bool = True
    filter_curly_bracket: bool = True
    filter_policy: bool = True
    max_removed_frac: float | None = 0.3


class LineResult(NamedTuple):
    rule: str | None  # the failing document rule, or None
    text: str  # the kept lines (the input text when a document rule failed)
    removed: dict[str, int]  # characters removed, by line rule
    chars: int  # characters in the (stripped) input lines
    sentences: int = 0  # in the kept lines, counted up to min_num_sentences (all of them when fewer)
    stop_line: int = 0  # the line (from 1) with lorem ipsum or a curly bracket that rejected the document

    @property
    def removed_frac(self) -> float:
        return sum(self.removed.values()) / self.chars if self.chars else 0.0


def check(text: str, cfg: C4Config) -> tuple[str | None, str]:
    """(first failing document rule or None, text made of the kept lines)."""
    result = filter_lines(text, cfg)
    return result.rule, result.text


def filter_lines(text: str, cfg: C4Config) -> LineResult:
    kept: list[str] = []
    removed: Counter = Counter()
    sentences = chars = 0
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        chars += len(line)
        # only "fewer than min_words_per_line words?" matters: split no further than that (same answer)
        n_words = len(line.split(None, cfg.min_words_per_line))
        if cfg.max_word_length != -1 and len(line) > cfg.max_word_length:
            if any(len(word) > cfg.max_word_length for word in line.split()):
                removed["too_long_word"] += len(line)
                continue
        if cfg.remove_citations and "[" in line:
            cited, line = len(line), CITATION_RE.sub("", line)
            removed["citation"] += cited - len(line)
        if cfg.filter_no_terminal_punct and (not line.endswith(END_PUNCTUATION) or line.endswith("...")):
            removed["no_terminal_punct"] += len(line)
            continue
        if n_words < cfg.min_words_per_line:
            removed["too_few_words"] += len(line)
            continue
        lowered = line.lower()
        if cfg.filter_lorem_ipsum and "lorem ipsum" in lowered:
            return LineResult("lorem_ipsum", text, dict(removed), chars, sentences, number)
        if cfg.filter_javascript and "javascript" in lowered:
            removed["javascript"] += len(line)
            continue
        if cfg.filter_curly_bracket and "{" in line:
            return LineResult("curly_bracket", text, dict(removed), chars, sentences, number)
        if cfg.filter_policy and any(p in lowered for p in POLICY_SUBSTRINGS):
            removed["policy"] += len(line)
            continue
        # Only the comparison with the minimum matters, so stop counting once it is reached.
        if cfg.min_num_sentences != -1 and sentences < cfg.min_num_sentences:
            sentences += count_sentences(line)
        kept.append(line)
    removed = {rule: n for rule, n in sorted(removed.items()) if n}
    if sentences < cfg.min_num_sentences:
        return LineResult("too_few_sentences", text, removed, chars, sentences)
    result = LineResult(None, "\n".join(kept).strip(), removed, chars, sentences)
    if cfg.max_removed_frac is not None and result.removed_frac > cfg.max_removed_frac:
        return result._replace(rule=REMOVED_CHAR_FRAC, text=text)
    return result


def _scan(view: TextView, cfg: C4Config) -> LineResult:
    return filter_lines(view.text, cfg)


def _lines(view: TextView, cfg: C4Config) -> LineResult:
    return cached(view, _scan, cfg)


def _stopped_at(rule: str):
    """The line (from 1) where the scan met `rule` (lorem ipsum, a curly bracket: the first one rejects); 0: none."""

    def line_number(view: TextView, cfg) -> int:
        lines = _lines(view, cfg)
        return lines.stop_line if lines.rule == rule else 0

    return line_number


@register("c4")
class C4(QualityFilter):
    """A line filter: one scan over the lines (filter_lines) drops lines and measures the document rules."""

    Config = C4Config
    on_by_default, default_position = True, 30
    rules = (
        Rule("lorem_ipsum", _stopped_at("lorem_ipsum"), 0),
        Rule("curly_bracket", _stopped_at("curly_bracket"), 0),
        Rule("too_few_sentences", lambda v, c: _lines(v, c).sentences, "min_num_sentences", "<"),
        Rule(REMOVED_CHAR_FRAC, lambda v, c: _lines(v, c).removed_frac, "max_removed_frac", digits=4),
    )

    def record(self, view: TextView, cfg, stats: dict) -> None:
        """What the line rules removed, recorded for every document (kept or not)."""
        lines = _lines(view, cfg)
        stats.update(line_removed_chars=lines.removed, line_removed_frac=round(lines.removed_frac, 4))

    def kept(self, view: TextView, cfg, stats: dict) -> TextView:
        lines = _lines(view, cfg)
        # no character removed: only blank lines and the lines' outer whitespace went, the words stay
        return view.rewrapped(lines.text) if not lines.removed else TextView(lines.text, view.words_splitter)
