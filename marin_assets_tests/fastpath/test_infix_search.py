"""all_matches finds exactly what finditer finds, trying the pattern only where a match can start."""

from __future__ import annotations

import json
import random
import re

from marin_assets.fastpath.words.infix_search import all_matches, first_char_class
from marin_assets.fastpath.words.spacy_words import RULES_FILE
from marin_assets_tests.data.test_filter_features import real_texts


def _spans(matches) -> list[tuple[int, int]]:
    return [m.span() for m in matches]


def test_spacy_infix_matches_equal_finditer():
    pattern = json.loads(RULES_FILE.read_text(encoding="utf-8"))["infix"]
    assert first_char_class(pattern) is not None  # the fast path is taken for spaCy's regex
    plain, fast = re.compile(pattern).finditer, all_matches(pattern)
    rng = random.Random(13)
    pieces = ["a", "Z", "0", "9", ".", "..", "...", "-", "--", "---", "/", ":", ",", "+", "*", "^", "~", "<", "=",
              "…", "–", "—", "é", "©", "°", "x"]  # fmt: skip
    synthetic = ["".join(rng.choices(pieces, k=rng.randint(0, 14))) for _ in range(20_000)]
    chunks = sorted({c for text in real_texts() for c in text.split()})
    for s in chunks + synthetic:
        assert _spans(fast(s)) == _spans(plain(s)), repr(s)


def test_first_characters_of_each_kind_of_pattern():
    assert set(first_char_class(r"(?<=[0-9])[+\-](?=[0-9])|\.\.+|(?:ab|cd)")[1:-1].replace("\\", "")) == set("+-.ac")
    for unknown in (r"a?b", r"(?i)a", r"[^a]b", r"x*", r".b"):  # optional first, case-blind, negated, empty, any
        assert first_char_class(unknown) is None, unknown
        assert _spans(all_matches(unknown)("ab xb Ab aab")) == _spans(re.finditer(unknown, "ab xb Ab aab"))


def test_lookbehinds_see_the_characters_before_a_candidate():
    fast = all_matches(r"(?<=[a-z])\.(?=[A-Z])|(?<=[0-9])-")
    assert _spans(fast("a.B 1-2 A.B x-y")) == [(1, 2), (5, 6)]
