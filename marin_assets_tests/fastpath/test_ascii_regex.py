"""ascii_only(pattern) finds the same matches as pattern on ASCII text, and splits words the same."""

from __future__ import annotations

import copy
import json
import random
import re

import pytest

from marin_assets.fastpath.words.ascii_regex import ascii_only
from marin_assets.fastpath.words.infix_search import all_matches
from marin_assets.fastpath.words.suffix_search import end_anchored_search, top_level_branches
from marin_assets.fastpath.words.spacy_words import RULES_FILE, rules
from marin_assets_tests.data.test_filter_features import real_texts

PIECES = ["a", "s", "S", "Z", "km", "g", "0", "9", ".", "..", "-", "--", "/", ":", ",", "+", "*", "^", "~", "<", "=",
          ">", "(", ")", "'", '"', "`", "$", "US$", "%", "_", "#", "!", "?", "&", "[", "]", "http://", "www.", "@"]  # fmt: skip


def _ascii_strings() -> list[str]:
    rng = random.Random(7)
    synthetic = ["".join(rng.choices(PIECES, k=rng.randint(0, 10))) for _ in range(20_000)]
    real = sorted({c for text in real_texts() for c in text.split() if c.isascii()})
    return real + synthetic


def _spans(found) -> list[tuple[int, int]] | None:
    if found is None:
        return None
    return [m.span() for m in found] if isinstance(found, list) else [found.span()]


@pytest.mark.parametrize("key", ["prefix", "suffix", "infix", "url"])
def test_spacy_patterns_match_alike_on_ascii_text(key):
    pattern = json.loads(RULES_FILE.read_text(encoding="utf-8"))[key]
    restricted = ascii_only(pattern)
    assert restricted is not None and len(restricted) < len(pattern) / 2  # most of the pattern is not ASCII
    build = {"prefix": lambda p: re.compile(p).search, "suffix": end_anchored_search, "infix": all_matches,
             "url": lambda p: re.compile(p).match}[key]  # fmt: skip
    full, fast = build(pattern), build(restricted)
    for s in _ascii_strings():
        assert _spans(fast(s)) == _spans(full(s)), repr(s)


def test_suffix_branches_stay_at_the_top_level():
    """suffix_search looks only at the chunk's end when every top-level branch ends with `$`."""
    restricted = ascii_only(json.loads(RULES_FILE.read_text(encoding="utf-8"))["suffix"])
    branches = top_level_branches(restricted)
    assert len(branches) > 20 and all(b.endswith("$") for b in branches)


def test_what_only_other_characters_match_goes():
    assert ascii_only("a…|b") == "b"  # a branch needing a non-ASCII literal
    assert ascii_only("[aé€]x") == "ax"  # a class keeps its ASCII members
    assert ascii_only("[é€]x") == "(?!)"  # nothing ASCII: never matches
    assert ascii_only("x(?:é)?y") == "xy"  # an optional item that cannot match: empty
    assert ascii_only("(?<!é)x") == "x"  # a negative lookbehind that cannot match always holds
    assert ascii_only("(?<=é)x") == "(?!)"  # a positive one never does
    assert ascii_only("(a)b+") == "(?:a)(?:b){1,}"  # groups no longer capture
    for s in ["ax", "xy", "x", "aab", "bx"]:
        for pattern in ("a…|b", "[aé€]x", "x(?:é)?y", "(?<!é)x", "(a)b+"):
            assert _spans(re.search(ascii_only(pattern), s)) == _spans(re.search(pattern, s))


def test_constructs_it_does_not_rebuild_keep_the_original():
    for pattern in (r"(a)\1", "(?i)a", "(?>ab)"):
        assert ascii_only(pattern) is None, pattern


def test_words_of_ascii_chunks_are_the_same_with_either_rules():
    spacy = rules()
    assert spacy.ascii_searches is not spacy.searches  # the restriction is in use
    full_only = copy.copy(spacy)
    full_only.ascii_searches = spacy.searches
    for chunk in _ascii_strings()[::3]:
        assert spacy.split_chunk(chunk) == full_only.split_chunk(chunk), repr(chunk)
