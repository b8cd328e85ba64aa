"""C4 quality filter (Raffel et al. 2020), same rules and defaults as datatrove's C4QualityFilter.

Line rules drop lines (the kept lines become the document's text); document rules reject it.
"""

from __future__ import annotations

import re

from marin_assets.core.recipes import Recipe
from marin_assets.data.filters.text import count_sentences

CITATION_RE = re.compile(r"\[\d*]|\[edit]|\[citation needed]")
END_PUNCTUATION = (".", "?", "!", '"', "'")
POLICY_SUBSTRINGS = ("terms of use", "privacy policy", "cookie policy", "uses cookies", "use of cookies", "use cookies")


class C4Config(Recipe):
    """Rule switches and thresholds; -1 switches a numeric rule off (as in C4 / datatrove)."""

    filter_no_terminal_punct: bool = True
    remove_citations: bool = True
    min_num_sentences: int = 5
    min_words_per_line: int = 3
    max_word_length: int = 1000
    filter_lorem_ipsum: bool = True
    filter_javascript: bool = True
    filter_curly_bracket: bool = True
    filter_policy: bool = True


def check(text: str, cfg: C4Config) -> tuple[str | None, str]:
    """(first failing document rule or None, text made of the kept lines)."""
    kept: list[str] = []
    sentences = 0
    for line in text.splitlines():
        line = line.strip()
        words = line.split()
        if cfg.max_word_length != -1 and len(line) > cfg.max_word_length:
            if any(len(word) > cfg.max_word_length for word in words):
                continue
        if cfg.remove_citations and "[" in line:
            line = CITATION_RE.sub("", line)
        if cfg.filter_no_terminal_punct and (not line.endswith(END_PUNCTUATION) or line.endswith("...")):
            continue
        if len(words) < cfg.min_words_per_line:
            continue
        lowered = line.lower()
        if cfg.filter_lorem_ipsum and "lorem ipsum" in lowered:
            return "lorem_ipsum", text
        if cfg.filter_javascript and "javascript" in lowered:
            continue
        if cfg.filter_curly_bracket and "{" in line:
            return "curly_bracket", text
        if cfg.filter_policy and any(p in lowered for p in POLICY_SUBSTRINGS):
            continue
        # Only the comparison with the minimum matters, so stop counting once it is reached.
        if cfg.min_num_sentences != -1 and sentences < cfg.min_num_sentences:
            sentences += count_sentences(line)
        kept.append(line)
    if sentences < cfg.min_num_sentences:
        return "too_few_sentences", text
    return None, "\n".join(kept).strip()
