"""Reflow of hard-wrapped text and the line-removal budget: wrapped prose is judged as prose."""

from __future__ import annotations

import random
import textwrap

from marin_assets.data.clean.filters import c4
from marin_assets.data.clean.filters.c4 import C4Config
from marin_assets.data.clean.filters.pipeline import FilterSettings, run_filters
from marin_assets.data.clean.filters import reflow as reflow_module
from marin_assets.data.clean.filters.reflow import ReflowConfig, reflow
from marin_assets.data.clean.filters.text import TERMINAL_PUNCTUATION
from marin_assets_tests.data.test_filter_features import real_texts
from marin_assets_tests.data.test_filters import GOOD, SENTENCES

PROSE = " ".join(SENTENCES)
PARAGRAPHS = [PROSE, " ".join(SENTENCES[::-1])]
WRAPPED = "\n\n".join(textwrap.fill(p, 60) for p in PARAGRAPHS)


def test_wrapped_paragraphs_are_joined_except_at_sentence_ends():
    out = reflow(WRAPPED, ReflowConfig())
    assert [p.replace("\n", " ") for p in out.split("\n\n")] == PARAGRAPHS
    # A wrap inside a sentence is joined; one that falls after a full stop may stay a line break.
    assert all(line.endswith(".") for line in out.split("\n") if line)
    assert out.count("\n") < WRAPPED.count("\n") / 2


def test_sentence_per_line_lists_and_short_lines_are_left_alone():
    assert reflow(GOOD, ReflowConfig()) == GOOD  # every line ends a sentence
    items = "Things to bring to the river mill in the early morning hours\n- grain and sacks\n- a lamp\n1. rope"
    assert reflow(items, ReflowConfig()) == items
    poem = "Roses are red\nviolets are blue\nthe mill is old\nand so are you"
    assert reflow(poem, ReflowConfig()) == poem  # narrower than min_width: not wrapped prose
    paragraphs = "\n".join(s * 3 for s in SENTENCES)  # 200+ character lines: already paragraphs
    assert reflow(paragraphs, ReflowConfig()) == paragraphs


def test_hyphenated_wrap_keeps_the_hyphen_without_a_space():
    text = "The miller keeps careful records of each sack that passes through a well-\nknown door in the valley."
    assert "well-known door" in reflow(text, ReflowConfig(min_width=20))


def test_c4_counts_removed_characters_by_rule_and_rejects_fragmented_documents():
    result = c4.filter_lines(GOOD + "\nOne two\nEnable javascript to view the page.", C4Config())
    assert result.rule is None
    assert result.removed == {"javascript": len("Enable javascript to view the page."), "too_few_words": 7}
    fragments = "\n".join(f"{s}\nword" for s in SENTENCES)
    strict = C4Config(filter_no_terminal_punct=True)
    cut = "\n".join(f"{s}\nand then the rest of the sentence goes on without ever reaching its end" for s in SENTENCES)
    result = c4.filter_lines(cut, strict)
    assert result.rule == c4.REMOVED_CHAR_FRAC and result.removed_frac > 0.3 and result.text == cut
    assert c4.filter_lines(cut, strict.model_copy(update={"max_removed_frac": None})).rule is None
    assert c4.filter_lines(fragments, C4Config()).rule is None  # 4 of ~560 characters removed


def test_pipeline_reflows_wrapped_text_then_keeps_all_of_it():
    strict = FilterSettings(gopher_repetition=None, c4=C4Config(filter_no_terminal_punct=True))  # 2nd paragraph repeats
    outcome = run_filters(WRAPPED, strict)
    assert outcome.kept and outcome.stats["line_removed_frac"] == 0.0
    assert outcome.text.replace("\n", " ") == " ".join(PARAGRAPHS)
    # Without reflow the same text loses most wrapped lines and is rejected by a named rule, not kept as fragments.
    shredded = run_filters(WRAPPED, strict.model_copy(update={"reflow": None}))
    assert shredded.reason in ("c4:removed_char_frac", "c4:too_few_sentences") and shredded.text == WRAPPED


def _is_wrap_as_stated(line: str, following: str, width: int, slack: int) -> bool:
    """The module's rules for one line break, one test at a time."""
    body, nxt = line.rstrip(), following.strip()
    if not body.strip() or not nxt or reflow_module._LIST_ITEM_RE.match(following):
        return False
    if body[-1] in TERMINAL_PUNCTUATION:
        return False
    return len(body) + 1 + len(nxt.split(maxsplit=1)[0]) > width - slack


def test_wraps_follow_the_rules_as_stated_on_real_and_random_texts():
    rng = random.Random(4)
    pieces = ["word", "a longer line of text", "\n", "\n\n", "  ", "- item", "1. x", "(iv) y", "end.", "hy-", "\t",
              "\u00a0", "x" * 45]  # fmt: skip
    texts = list(real_texts()) + ["".join(rng.choices(pieces, k=rng.randint(0, 60))) for _ in range(3000)]
    compared = 0
    for text in texts:
        lines = text.split("\n")
        for width, slack in ((60, 0), (20, 3)):
            got = reflow_module._wraps(lines, [x.rstrip() for x in lines], [x.strip() for x in lines], width - slack)
            assert got == [_is_wrap_as_stated(a, b, width, slack) for a, b in zip(lines, lines[1:])], repr(text[:80])
            compared += len(got)
    assert compared > 10_000
    assert reflow_module.wrap_width(["ab", "", "abcd", ""], 0.9) == 4
