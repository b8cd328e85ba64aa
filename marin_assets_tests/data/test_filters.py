"""Each quality rule: a document that passes it and one that fails it (thresholds are datatrove's)."""

from __future__ import annotations

import pytest

from marin_assets.data.clean.filters import c4, fineweb, gopher_quality, gopher_repetition
from marin_assets.data.clean.filters.c4 import C4Config
from marin_assets.data.clean.filters.fineweb import FineWebConfig
from marin_assets.data.clean.filters.gopher_quality import GopherQualityConfig
from marin_assets.data.clean.filters.gopher_repetition import GopherRepetitionConfig
from marin_assets.data.clean.filters.pipeline import FilterSettings, run_filters
from marin_assets.data.clean.filters.text import TextView, count_sentences, split_words

SENTENCES = [
    "The river runs past the old mill and into the valley below the town.",
    "Farmers bring their grain to be ground there before the winter comes.",
    "Children play with the dogs that live near the water in the summer.",
    "Every spring the snow melts and the current grows strong and cold.",
    "Visitors often stop to watch the wheel turn slowly in the morning light.",
    "The miller keeps careful records of each sack that passes through his door.",
    "In the evening the lamps are lit and the workers walk home together.",
    "Stories of the mill have been told in this valley for many generations.",
]
GOOD = "\n".join(SENTENCES)


def test_good_document_passes_every_filter():
    outcome = run_filters(GOOD, FilterSettings())
    assert outcome.reason is None
    assert outcome.text == GOOD
    assert outcome.stats["words"] == len(split_words(GOOD))


def test_tokenizer_splits_like_spacy_english():
    assert split_words("It's (well-known), see http://x.org/a. Mail a@b.org! 3.14 U.S. GPL-2") == [
        "It", "'s", "(", "well", "-", "known", ")", ",", "see", "http://x.org/a", ".",
        "Mail", "a@b.org", "!", "3.14", "U.S.", "GPL-2",
    ]  # fmt: skip
    assert count_sentences('One. Two! Three? "Four." e.g. five... six') == 6


REPETITION_CASES = [
    ("dup_para_frac", "\n\n".join([SENTENCES[0]] * 3 + SENTENCES[1:3])),
    ("dup_para_char_frac", "\n\n".join([" ".join(SENTENCES)] * 2 + SENTENCES[1:6])),
    ("dup_line_frac", "\n".join([SENTENCES[0]] * 3 + SENTENCES[1:4])),
    ("dup_line_char_frac", "\n".join([" ".join(SENTENCES[:4])] * 2 + SENTENCES[4:] + SENTENCES[:1])),
    ("top_2_gram", " ".join(["the river"] * 30 + SENTENCES[:1])),
    ("duplicated_5_n_grams", GOOD + "\n" + " ".join(SENTENCES[:3]) + " It ends here."),
]


@pytest.mark.parametrize("rule,text", REPETITION_CASES)
def test_gopher_repetition_rules(rule, text):
    cfg = GopherRepetitionConfig()
    assert gopher_repetition.check(TextView(text), cfg) == rule
    assert gopher_repetition.check(TextView(GOOD), cfg) is None


def test_gopher_repetition_threshold_is_overridable():
    text = REPETITION_CASES[2][1]
    assert gopher_repetition.check(TextView(text), GopherRepetitionConfig(dup_line_frac=0.9, dup_line_char_frac=None,
                                                                          dup_para_frac=None)) != "dup_line_frac"


QUALITY_CASES = [
    ("gopher_short_doc", "Just a few words here."),
    ("gopher_below_avg_threshold", " ".join(["a an to of it is"] * 20)),
    ("gopher_above_avg_threshold", " ".join(["extraordinarily incomprehensibilities"] * 40)),
    ("gopher_too_many_hashes", GOOD + " #" * 30),
    ("gopher_too_many_ellipsis", GOOD + " ..." * 30),
    ("gopher_too_many_bullets", "\n".join(f"- {s}" for s in SENTENCES)),
    ("gopher_too_many_end_ellipsis", "\n".join(f"{s[:-1]}..." for s in SENTENCES[:4]) + "\n" + "\n".join(SENTENCES[4:])),
    ("gopher_below_alpha_threshold", GOOD + " 12345" * 400),
    ("gopher_enough_stop_words", " ".join(["river mill valley water snow current wheel morning"] * 8)),
]


@pytest.mark.parametrize("rule,text", QUALITY_CASES)
def test_gopher_quality_rules(rule, text):
    cfg = GopherQualityConfig()
    assert gopher_quality.check(TextView(text), cfg) == rule
    assert gopher_quality.check(TextView(GOOD), cfg) is None


C4_CASES = [
    ("lorem_ipsum", GOOD + "\nLorem ipsum dolor sit amet, consectetur."),
    ("curly_bracket", GOOD + "\nThe config is {a: 1} in this file."),
    ("too_few_sentences", "\n".join(SENTENCES[:3])),
]


@pytest.mark.parametrize("rule,text", C4_CASES)
def test_c4_document_rules(rule, text):
    assert c4.check(text, C4Config())[0] == rule
    assert c4.check(GOOD, C4Config()) == (None, GOOD)


def test_c4_line_rules_drop_lines():
    text = GOOD + "\nno terminal punctuation here\nEnable javascript to see this page.\nWe use cookies on this site.\nShort."
    reason, kept = c4.check(text, C4Config(filter_no_terminal_punct=True))
    assert reason is None and kept == GOOD
    # Without the terminal punctuation rule (FineWeb's setting, our default) the first extra line stays.
    assert "no terminal punctuation here" in c4.check(text, C4Config())[1]


def test_c4_too_few_words_counts_every_word_up_to_the_minimum():
    lines = ["one", "one two", "one two three", "one two three four", "a  b\tc [1] d", "x [1]", "[1] [2] z y"]
    text = "\n".join(lines)
    for minimum in (-1, 0, 1, 2, 3, 4, 5):
        removed = c4.filter_lines(text, C4Config(min_words_per_line=minimum, min_num_sentences=-1)).removed
        # words counted before citations are cut; the removed characters are the line's after the cut
        expected = sum(len(c4.CITATION_RE.sub("", line)) for line in lines if len(line.split()) < minimum)
        assert removed.get("too_few_words", 0) == expected, minimum


FINEWEB_CASES = [
    ("line_punct_ratio", "\n".join(s.rstrip(".") + " and more words follow here" for s in SENTENCES)),
    ("short_line_ratio", "\n".join(["Short line."] * 3 + [f"Tiny {i}." for i in range(5)] + SENTENCES[:2])),
    ("char_dup_ratio", "\n".join(SENTENCES + SENTENCES[:1])),
    ("list_ratio", "\n".join(f"Item{i}." for i in range(100)) + "\n" + GOOD),
]


@pytest.mark.parametrize("rule,text", FINEWEB_CASES)
def test_fineweb_rules(rule, text):
    cfg = FineWebConfig(short_line_length=30)
    if rule == "list_ratio":
        cfg = FineWebConfig(short_line_thr=1.0)
    assert fineweb.check(text, cfg) == rule
    assert fineweb.check(GOOD, cfg) is None


def test_pipeline_reports_first_failing_rule_with_filter_prefix():
    assert run_filters("", FilterSettings()).reason == "gopher_repetition:empty"
    assert run_filters(QUALITY_CASES[6][1], FilterSettings()).reason == "gopher_quality:gopher_too_many_end_ellipsis"
    assert run_filters(C4_CASES[0][1], FilterSettings()).reason == "c4:lorem_ipsum"
    off = FilterSettings(gopher_repetition=None, gopher_quality=None, c4=None, fineweb=None)
    assert run_filters("", off).reason is None


@pytest.mark.parametrize("rule,text", REPETITION_CASES)
def test_gopher_repetition_records_the_value_its_rule_measured(rule, text):
    """The value recorded with a rejection is the rule's own measure, which tripped its threshold."""
    from marin_assets.data.clean.filters.gopher_repetition import GopherRepetition

    cfg = GopherRepetitionConfig()
    found = GopherRepetition().reject(TextView(text), cfg)
    assert found.rule == rule
    declared = next(r for r in GopherRepetition().rules_for(cfg) if r.name == rule)
    view, limit = TextView(text), declared.limit(cfg)
    assert declared.could_trip is None or declared.could_trip(view, cfg, limit)
    measured = declared.measure(view, cfg)
    assert declared.trips(measured, limit)
    assert found.value == (measured if declared.digits is None else round(measured, declared.digits))
