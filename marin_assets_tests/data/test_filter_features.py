"""The fast per-document features (TextView, repetition fractions, normalisation) against plain references.

Each reference is the straightforward implementation (word tuples in a set or Counter, one regex pass
per step): the fast paths must give exactly the same values on the sample sources' real texts and on
synthetic highly repetitive ones (where the repeat-skipping scan matters most).
"""

from __future__ import annotations

import itertools
import random
import re
import sys
import unicodedata
from collections import Counter
from functools import cache

import numpy as np
import pytest

from marin_assets.data.clean import normalize
from marin_assets.data.extract.extractor_choice import html_to_text
from marin_assets.data.clean.filters.gopher_repetition import (
    GopherRepetitionConfig, check, duplicated_ngram_chars, earlier_occurrences, earlier_occurrences_by_n,
    repeated_cover_chars, split_lines, split_paragraphs, top_ngram_chars,
)
from marin_assets.data.clean.filters.text import PUNCTUATION, TextView, split_words
from marin_assets.fastpath.words.spacy_words import rules
from marin_assets.data.clean.normalize import normalize_text
from marin_assets.data.formats.readers import RawRecord, list_source_files, read_file
from marin_assets.data.sources.source_registry import load_sources


def reference_duplicated_chars(words: list[str], n: int) -> int:
    """datatrove's find_all_duplicate, with word tuples as the n-grams."""
    seen, repeated, idx = set(), 0, 0
    while idx < len(words) - n + 1:
        gram = tuple(words[idx : idx + n])
        if gram in seen:
            repeated += sum(map(len, gram))
            idx += n
        else:
            seen.add(gram)
            idx += 1
    return repeated


def reference_top_chars(words: list[str], n: int) -> int:
    """datatrove's find_top_duplicate: the most common n-gram (first seen on ties), joined by spaces."""
    gram, count = Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1)).most_common(1)[0]
    return len(" ".join(gram)) * count


def reference_split_words(text: str) -> list[str]:
    """Every chunk through the tokenizer rules: no fast path for letter-only chunks, no memo."""
    return [word for chunk in text.split() for word in rules().split_chunk(chunk)]


INNER_SPACES_REFERENCE = re.compile(r"(?<=\S) {2,}")  # the rule as stated; normalize's regex is faster
LINE_END_REFERENCE = re.compile(r" *\n(?: *\n)*")  # the rule as stated; normalize strips per line


def _line_end(match: re.Match) -> str:
    return "\n\n" if match.group(0).count("\n") >= 2 else "\n"


def reference_normalize(text: str) -> str:
    text = unicodedata.normalize("NFC", text)
    for pattern, repl in ((normalize._CONTROL_RE, ""), (normalize._LINE_BREAKS_RE, "\n"),
                          (normalize._OTHER_SPACE_RE, " "), (INNER_SPACES_REFERENCE, " "),
                          (LINE_END_REFERENCE, _line_end)):  # fmt: skip
        text = pattern.sub(repl, text)
    return text.strip()


@cache
def real_texts() -> tuple[str, ...]:
    """The sample sources' documents as the filters see them (extracted, normalised)."""
    texts = []
    for spec in load_sources().sources:
        for path in list_source_files(spec):
            for rec in read_file(path, spec):
                if isinstance(rec, RawRecord):
                    raw = html_to_text(rec.content) if rec.content_type == "html" else rec.content
                    texts.append(normalize_text(raw))
    return tuple(t for t in texts if t)


def repetitive_texts(count: int = 60) -> list[str]:
    """Documents made of a few phrases repeated with small changes: many overlapping repeats."""
    rng = random.Random(7)
    vocab = "the a river mill of and to in stone water, grain. it's (see) U.S. well-known 3.14".split()
    texts = []
    for _ in range(count):
        phrases = [" ".join(rng.choices(vocab, k=rng.randint(2, 12))) for _ in range(rng.randint(1, 6))]
        texts.append("\n".join(" ".join(rng.choices(phrases, k=rng.randint(1, 4))) for _ in range(rng.randint(5, 80))))
    return texts


def test_real_texts_are_many():
    assert len(real_texts()) >= 50


def texts_of(kind: str) -> list[str]:
    return real_texts()[:300] if kind == "real" else repetitive_texts()


@pytest.mark.parametrize("kind", ["real", "repetitive"])
def test_repetition_fractions_equal_the_reference(kind):
    texts = texts_of(kind)
    checked = 0
    for text in texts:
        view = TextView(text)
        assert view.words == reference_split_words(text)
        for n in (2, 3, 4):
            if len(view.words) >= n:
                assert top_ngram_chars(view, n) == reference_top_chars(view.words, n), (n, text[:80])
        for n in range(5, 11):
            expected = reference_duplicated_chars(view.words, n)
            assert duplicated_ngram_chars(view, n) == expected, (n, text[:80])
            checked += expected > 0
    assert checked > 0  # some texts do repeat n-grams


@pytest.mark.parametrize("kind", ["real", "repetitive"])
def test_top_ngram_rules_decide_as_counting_every_n(kind):
    """check() skips counting an n whose rule cannot trip (a shorter n-gram's top count times the longest
    n-gram stays under it): thresholds at and just under each fraction give the reference's decision."""
    no_other_rule = dict(dup_line_frac=None, dup_para_frac=None, dup_line_char_frac=None, dup_para_char_frac=None,
                         dup_n_grams={})  # fmt: skip
    tripped = 0
    for text in texts_of(kind)[:150]:
        words = TextView(text).words
        if len(words) < 4:
            continue
        frac = {n: reference_top_chars(words, n) / len(text) for n in (2, 3, 4)}
        for offsets in itertools.product((0, 1), repeat=2):  # 1: the threshold just under the fraction
            top = {2: frac[2], 3: frac[3], 4: frac[4]}
            for n, below in zip((3, 4), offsets):
                top[n] = float(np.nextafter(frac[n], 0)) if below else frac[n]
            expected = next((f"top_{n}_gram" for n in (2, 3, 4) if frac[n] > top[n]), None)
            cfg = GopherRepetitionConfig(top_n_grams=top, **no_other_rule)
            assert check(TextView(text), cfg) == expected, (offsets, text[:80])
            tripped += expected is not None
    assert tripped > 0


@pytest.mark.parametrize("kind", ["real", "repetitive"])
def test_repeated_cover_chars_bound_every_longer_duplicated_rule(kind):
    covered_some = 0
    for text in texts_of(kind)[:150]:
        view = TextView(text)
        words = view.words
        grams = Counter(tuple(words[i : i + 5]) for i in range(len(words) - 4))
        positions = [i for i in range(len(words) - 4) if grams[tuple(words[i : i + 5])] > 1]
        covered = {i + k for i in positions for k in range(5)}
        chars = repeated_cover_chars(view, positions, 5)
        assert chars == sum(len(words[i]) for i in covered), text[:80]
        assert all(reference_duplicated_chars(words, m) <= chars for m in range(5, 11))
        covered_some += chars > 0
    assert covered_some > 0


@pytest.mark.parametrize("kind", ["real", "repetitive"])
def test_duplicated_ngram_rules_decide_as_without_the_cover_bound(kind):
    """check() stops when the repeated 5-grams cover too little text: thresholds at and just under
    each n's duplicated fraction give the reference's decision."""
    no_other_rule = dict(dup_line_frac=None, dup_para_frac=None, dup_line_char_frac=None, dup_para_char_frac=None,
                         top_n_grams={})  # fmt: skip
    tripped = 0
    for text in texts_of(kind)[:100]:
        words = TextView(text).words
        for n in (5, 7, 10):
            frac = reference_duplicated_chars(words, n) / len(text)
            for threshold in (frac, float(np.nextafter(frac, 0))):
                dup = {m: 1.0 for m in range(5, 11)} | {n: threshold}
                expected = f"duplicated_{n}_n_grams" if frac > threshold else None
                cfg = GopherRepetitionConfig(dup_n_grams=dup, **no_other_rule)
                assert check(TextView(text), cfg) == expected, (n, threshold, text[:80])
                tripped += expected is not None
    assert tripped > 0


@pytest.mark.parametrize("period", [6, 30, 31])
def test_periodic_texts_equal_the_reference(period):
    """A pattern repeated through a long text: each repeat's earlier occurrences were skipped over, so the
    scan must find the remembered one without walking back the chain (quadratic before: ~10^9 steps at 1M
    words). The 30-word pattern passes every top n-gram rule, so check() reaches the duplicated n-grams."""
    pattern = [f"tok{i}" for i in range(period)]
    text = " ".join(pattern * (12_000 // period) + pattern[: period // 2] + ["end"] + pattern * 40)
    view = TextView(text)
    for n in range(5, 11):
        assert duplicated_ngram_chars(view, n) == reference_duplicated_chars(view.words, n) > 0, n
    if period >= 30:
        assert check(view, GopherRepetitionConfig()) == "duplicated_5_n_grams"


@pytest.mark.parametrize("kind", ["real", "repetitive"])
def test_earlier_occurrences_by_n_equal_each_n_alone(kind):
    """check() finds each longer n-gram's repeats among the shorter one's; the same as comparing all n-grams."""
    texts = texts_of(kind)
    repeats = 0
    for text in texts:
        view = TextView(text)
        by_n = earlier_occurrences_by_n(view, 5)
        for n in range(5, 14):
            m, prev_of = next(by_n)
            assert (m, prev_of) == (n, earlier_occurrences(view.ngram_hashes(n))), (n, text[:80])
            assert duplicated_ngram_chars(view, n, prev_of=prev_of) == reference_duplicated_chars(view.words, n)
            repeats += len(prev_of)
    assert repeats > 0


def test_word_classes_equal_the_reference():
    for text in real_texts()[:200] + tuple(repetitive_texts(10)) + ("x² = 3½ and Ⅲ V",):
        view = TextView(text)
        assert view.non_symbol_mask.tolist() == [any(c not in PUNCTUATION for c in w) for w in view.words]
        # datatrove's rule: a word with a str.isalpha character ("²", "½" and "Ⅲ" are none)
        assert view.alpha_word_count == sum(1 for w in view.words if any(c.isalpha() for c in w))
    assert TextView("x² ½ Ⅲ the").alpha_word_count == 2
    assert not any(c.isalpha() for c in PUNCTUATION)  # so a word of letters is both classes (words.word_class)


def test_word_table_is_bounded_and_stays_correct(monkeypatch):
    from marin_assets.data.clean.filters import word_table
    monkeypatch.setattr(word_table, "_MEMO_MAX", 5)
    sample = "It's (well-known), see http://x.org/a. Mail a@b.org! 3.14 U.S. GPL-2 (again), and again."
    first = TextView(sample)
    assert first.n_words == len(reference_split_words(sample))  # split now, into the table in use
    assert split_words(sample) == split_words(sample) == reference_split_words(sample)
    # a full table is replaced between documents: at most one document's chunks in the one in use
    assert len(word_table._TABLE.chunk_ids) <= len(set(sample.split()))
    # a document split before the replacement keeps its own table
    assert first.words == reference_split_words(sample)
    assert first.word_lengths.tolist() == [len(w) for w in first.words]


def test_rewrapped_view_shares_words_only_when_text_differs_in_whitespace():
    view = TextView("one two,\n\nthree (four)")
    assert view.rewrapped(" one  two,\nthree (four) ").words == view.words


def test_paragraph_and_line_splits_equal_the_regexes():
    rng = random.Random(5)
    pieces = ["a", "b c", "\n", "\n\n", "\n\n\n", " "]
    synthetic = ["".join(rng.choices(pieces, k=rng.randint(0, 12))) for _ in range(3000)]
    for text in list(real_texts()) + synthetic:
        assert split_paragraphs(text) == re.split(r"\n{2,}", text), repr(text)
        assert split_lines(text) == re.split(r"\n+", text), repr(text)


def test_normalize_fast_paths_equal_the_reference():
    rng = random.Random(3)
    pieces = ["word", " ", "  ", "\n", "\n\n\n", " \n", "\t", "\r\n", "\r", "\u00a0", "\u2028", "\x00", "\u200b",
              "e\u0301", "\x85", "\ufeff", "x", "."]  # fmt: skip
    synthetic = ["".join(rng.choices(pieces, k=rng.randint(1, 40))) for _ in range(2000)]
    for text in list(real_texts()) + synthetic:
        assert normalize_text(text) == reference_normalize(text), repr(text[:80])



def test_one_class_finds_every_character_the_three_replacing_regexes_do():
    patterns = (normalize._CONTROL_RE, normalize._LINE_BREAKS_RE, normalize._OTHER_SPACE_RE)
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert bool(normalize._REPLACED_RE.match(char)) == any(p.match(char) for p in patterns), hex(code)


def test_texts_with_every_replaced_character_equal_the_reference():
    """Removed, line-break and space characters mixed, as normalize replaces them a character at a time;
    a control character between "\r" and "\n" leaves one line break, as the regexes in turn do."""
    replaced = [c for c in map(chr, range(0x10000)) if normalize._REPLACED_RE.match(c)]
    assert len(replaced) == 84
    rng = random.Random(5)
    pieces = [*replaced, "\r\n", "\r\x00\n", "\r\u200b\n", "word", " ", "  ", "\n", " \n", "é", "x"]
    texts = ["".join(rng.choices(pieces, k=rng.randint(1, 30))) for _ in range(5000)]
    for text in texts + ["\r\x00\n", "a\r\ufeff\nb", "\x85\u2028\xa0\t"]:
        assert normalize_text(text) == reference_normalize(text), repr(text)
    assert normalize_text("a\r\x00\nb") == "a\nb"


def test_normalize_tab_only_texts_equal_the_reference():
    """Texts whose only unprintable characters are tabs take normalize's replace-the-tabs path."""
    rng = random.Random(4)
    pieces = ["word", " ", "  ", "\n", "\n\n\n", " \n", "\t", "\t\t", " \t\n", "x", "."]
    texts = ["".join(rng.choices(pieces, k=rng.randint(1, 40))) for _ in range(2000)]
    assert sum("\t" in t for t in texts) > 1500
    for text in texts:
        assert normalize_text(text) == reference_normalize(text), repr(text[:80])

def test_inner_spaces_regex_finds_what_the_stated_rule_does():
    rng = random.Random(4)
    # runs of spaces after text and after line starts, other whitespace before them
    pieces = ["a", "é", ".", " ", "  ", "   ", "\n", "\t", "\u00a0", "\u3000"]
    texts = ["".join(rng.choices(pieces, k=rng.randint(0, 16))) for _ in range(20000)] + list(real_texts())
    for text in texts + ["a  b", "  a", "a \n  b", "\t  a", "a\u00a0  b"]:
        assert normalize._INNER_SPACES_RE.sub(" ", text) == INNER_SPACES_REFERENCE.sub(" ", text), repr(text)
    assert normalize._INNER_SPACES_RE.sub(" ", "  x   y,  z \n  w") == "  x y, z \n  w"


def test_dedup_key_collapses_whitespace_as_the_regex_does():
    spaces = [c for c in map(chr, range(sys.maxunicode + 1)) if re.match(r"\s", c)]  # regex whitespace
    assert "\u3000" in spaces and "\x1c" in spaces
    rng = random.Random(6)
    texts = ["".join(rng.choices([*spaces, "a", "B", "ß", "İ"], k=rng.randint(0, 12))) for _ in range(20000)]
    for text in texts + list(real_texts()[:50]):
        assert normalize.dedup_key(text) == re.sub(r"\s+", " ", text.casefold()).strip(), repr(text)


def test_every_character_the_first_normalisation_steps_replace_is_unprintable():
    """normalize_text skips those steps for printable texts: that is right only if this holds."""
    patterns = (normalize._CONTROL_RE, normalize._LINE_BREAKS_RE, normalize._OTHER_SPACE_RE)
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if char != "\n" and char.isprintable():
            assert not any(p.search(char) for p in patterns), hex(code)


def _splitlines_counts(text: str) -> tuple[int, int, int]:
    """gopher_quality's line counts as datatrove takes them, over str.splitlines."""
    lines = text.splitlines() or [""]
    bullets = sum(1 for line in lines if line.lstrip().startswith(("\u2022", "-")))
    return len(lines), bullets, sum(1 for line in lines if line.rstrip().endswith(("...", "\u2026")))


def test_bullet_and_ellipsis_lines_counted_by_regex_equal_the_per_line_count():
    from marin_assets.data.clean.filters.gopher_quality import line_counts

    rng = random.Random(8)
    pieces = ["a", "-", "\u2022", " ", "\t", "\xa0", "\u3000", "\x1f", "\n", "\n\n", "...", "..", ".", "\u2026", "x",
              "\r", "\u2028", "\r\n", "- a"]  # fmt: skip
    texts = ["".join(rng.choices(pieces, k=rng.randint(0, 12))) for _ in range(60_000)]
    assert sum("\r" not in t and "\u2028" not in t for t in texts) > 20_000  # many take the regex path
    for text in texts + list(real_texts()) + ["", "\n", "a...\n", "\u2022 a\n- b\n  -c\nd", "x ...\t\n\u2026 \n"]:
        assert line_counts(text) == _splitlines_counts(text), repr(text)
    assert line_counts("- a\n  \u2022 b\nc...\nd\u2026  ") == (4, 2, 2)


def test_other_line_breaks_are_exactly_what_splitlines_splits_at_besides_newline():
    from marin_assets.data.clean.filters.gopher_quality import _OTHER_LINE_BREAKS

    breaks = {chr(c) for c in range(sys.maxunicode + 1) if len(f"a{chr(c)}b".splitlines()) == 2}
    assert breaks == {*_OTHER_LINE_BREAKS, "\n"}
