"""end_anchored_search finds exactly what re.search finds, looking only at the end where it can."""

from __future__ import annotations

import random
import re

from marin_assets.fastpath.words.suffix_search import end_anchored_search, top_level_branches
from marin_assets.fastpath.words.spacy_words import RULES_FILE
from marin_assets_tests.data.test_filter_features import real_texts


def _spacy_suffix() -> str:
    import json

    return json.loads(RULES_FILE.read_text(encoding="utf-8"))["suffix"]


def _span(match: re.Match | None):
    return None if match is None else match.span()


def _strings() -> list[str]:
    rng = random.Random(11)
    chunks = sorted({c for text in real_texts() for c in text.split()})
    pieces = ["a", "Z", "9", ".", "..", "…", ",", ")", "'s", "km", "²", "%", "$", "€", "é", "-", "\n", "\u3002"]
    synthetic = ["".join(rng.choices(pieces, k=rng.randint(0, 14))) for _ in range(4000)]
    dots = ["x" + "." * n for n in range(1, 90)] + ["9" + "." * n + "km" for n in range(0, 70)]
    return chunks + synthetic + dots


def test_spacy_suffix_search_equals_the_plain_search():
    pattern = _spacy_suffix()
    plain, fast = re.compile(pattern).search, end_anchored_search(pattern)
    assert fast is not plain  # the fast path is taken for spaCy's regex
    strings = _strings()
    assert len(strings) > 10_000
    for s in strings:
        assert _span(fast(s)) == _span(plain(s)), repr(s)


def test_wide_and_unbounded_branches_are_searched_over_the_whole_string():
    pattern = r"x{70}$|(?<=[0-9])y$|z+$|\.$"
    plain, fast = re.compile(pattern).search, end_anchored_search(pattern)
    for s in ["x" * 80, "a" + "x" * 70, "1y", "ay", "z" * 200, "zz.", "y\n", "." + "z" * 3, "q" + "z" * 100 + "\n", ""]:
        assert _span(fast(s)) == _span(plain(s)), repr(s)


def test_branches_are_split_only_at_the_top_level():
    assert top_level_branches(r"a$|(b|c)$|[|)]$|\|$") == ["a$", "(b|c)$", "[|)]$", r"\|$"]
    assert top_level_branches("abc") == ["abc"]


def test_a_pattern_with_a_branch_not_at_the_end_is_searched_the_plain_way():
    pattern = r"a$|b"
    fast = end_anchored_search(pattern)
    for s in ["ba", "xbx", "a", "ab"]:
        assert _span(fast(s)) == _span(re.compile(pattern).search(s))
