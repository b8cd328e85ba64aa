"""Word splitting as datatrove's Gopher filters do it (spaCy's blank English tokenizer), without spaCy.

Fixed cases for each rule that used to differ (special cases, affixes spaCy strips, URL-like chunks,
numbers with units), and, where spaCy is installed (the bench group), the same words as spaCy itself
on the sample sources' real texts and rules identical to the installed spaCy's.
"""

from __future__ import annotations

import pytest

from marin_assets.data.clean.filters.gopher_quality import GopherQualityConfig, check
from marin_assets.data.clean.filters.text import TextView, split_words
from marin_assets.fastpath.words.spacy_words import rules
from marin_assets_tests.data.test_filter_features import real_texts

CASES = [
    ("You cannot stop it. Cannot!", ["You", "can", "not", "stop", "it", ".", "Can", "not", "!"]),  # special cases
    ("id im Wed", ["i", "d", "i", "m", "We", "d"]),  # spaCy's apostrophe-less contractions
    ("x >= 4.0 y", ["x", ">", "=", "4.0", "y"]),  # ">" is a prefix
    ("a '' b :) c (= d :*", ["a", "''", "b", ":)", "c", "(=", "d", ":*"]),  # emoticons stay whole
    ("apt install man-db.service pickle.Pickler.dump", ["apt", "install", "man-db.service", "pickle.Pickler.dump"]),
    ("see <https://www.gnu.org/licenses/>.", ["see", "<", "https://www.gnu.org/licenses/", ">", "."]),
    ("10m of 6G, 11.99g", ["10", "m", "of", "6", "G", ",", "11.99", "g"]),  # units after numbers
    ("e.g., U.S. GPL-2", ["e.g.", ",", "U.S.", "GPL-2"]),
    # affixes peeled off both ends, with a special case left inside or found across the tokens
    ("(cannot) ((e.g.)) \"U.S.\", \"don't\"", ["(", "can", "not", ")", "(", "(", "e.g.", ")", ")", '"', "U.S.",
                                                '"', ",", '"', "do", "n't", '"']),  # fmt: skip
    ("(:)) ...hello... (==)!", ["(", ":))", "...", "hello", "...", "(=", "=)", "!"]),
]


@pytest.mark.parametrize("text,words", CASES)
def test_words_follow_spacy_english_rules(text, words):
    assert split_words(text) == words


def test_a_special_case_made_of_affixes_is_found_inside_a_chunk():
    assert split_words("(==)") == ["(=", "=)"]  # spaCy's special-case matcher over the affix tokens


def test_the_word_count_decides_gopher_quality_like_datatrove():
    # 40 prose words and 10 "cannot": 60 words for datatrove (50 content words), not 50 (too short for us)
    text = " ".join(["the cat sat with the dog and the bird."] * 4 + ["cannot"] * 10)
    assert len(TextView(text).words) == 4 * 10 + 20
    assert check(TextView(text), GopherQualityConfig()) is None


def test_same_words_as_spacy_on_the_sample_texts():
    """Known residual: spaCy's special-case matcher also weighs matches across whitespace (`format): ')`:
    the cross-chunk `:')` outranks `):`, and neither applies); ours looks within a chunk. 1 text in 120."""
    spacy = pytest.importorskip("spacy")
    nlp = spacy.blank("en")
    texts = real_texts()[:120]
    differing = [t[:60] for t in texts if split_words(t) != [tok.text.strip() for tok in nlp(t) if tok.text.strip()]]
    assert len(differing) <= 1, differing


def test_shipped_rules_are_the_installed_spacys():
    spacy = pytest.importorskip("spacy")
    from spacy.attrs import ORTH

    tok = spacy.blank("en").tokenizer
    shipped = rules()
    # a tripwire, not a skip: another spaCy may ship other rules, which `words: fast` would not follow
    why = (f"spaCy {spacy.__version__} installed, fastpath/words/spacy_en_rules.json from spaCy {shipped.version}: "
           "regenerate it with scripts/make_spacy_en_rules.py")  # fmt: skip
    assert shipped.prefix.__self__.pattern == tok.prefix_search.__self__.pattern, why
    assert shipped.suffix_pattern == tok.suffix_search.__self__.pattern, why
    assert shipped.infix_pattern == tok.infix_finditer.__self__.pattern, why
    assert shipped.url.__self__.pattern == tok.url_match.__self__.pattern, why
    assert shipped.special == {k: tuple(t[ORTH] for t in v) for k, v in tok.rules.items() if not k.isspace()}, why


def test_what_stripping_leaves_is_split_once_with_the_same_tokens(monkeypatch):
    """The affix loop's inner states are remembered (words.SpacyEnglishRules._inner): a chunk gives the
    same tokens whether what its affixes leave was met before, in another chunk, or not."""
    import marin_assets.fastpath.words.spacy_words as words

    spacy = rules()
    chunks = ['("U.S.")', '"U.S.",', "(e.g.),", "((cannot))", "(10km),", "[man-db.service];", "(==)!", "'x>=4.0'", "(x),"]
    alone = {}
    for chunk in chunks:
        spacy.state_tokens.clear()
        alone[chunk] = spacy.split_chunk(chunk)
    assert alone['("U.S.")'] == ("(", '"', "U.S.", '"', ")") and alone["((cannot))"] == ("(", "(", "can", "not", ")", ")")
    order = chunks + chunks[::-1]
    assert [spacy.split_chunk(chunk) for chunk in order] == [alone[chunk] for chunk in order]
    assert '"U.S."' in spacy.state_tokens and "10km" in spacy.state_tokens  # inner states
    assert "x" not in spacy.state_tokens  # letters alone are one word, with no lookup
    monkeypatch.setattr(words, "STATE_MEMO_MAX", 2)  # a full memo starts afresh
    spacy.state_tokens.clear()
    assert [spacy.split_chunk(chunk) for chunk in order] == [alone[chunk] for chunk in order]
    assert len(spacy.state_tokens) <= 2
