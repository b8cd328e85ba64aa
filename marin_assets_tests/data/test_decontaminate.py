"""Decontamination on planted cases: 13-gram overlaps found through case and punctuation, near misses kept."""

import numpy as np

from marin_assets.data.curate.decontaminate import (
    build_index, decontaminate, ngram_hashes, normalized_tokens, normalized_words,
)
from marin_assets.data.curate.decontamination_step import DecontaminationStep
from marin_assets.data.curate.sorted_membership import in_sorted
from marin_assets.data.curate.step_outcome import Value
from marin_assets_tests.data.planted_corpus import prose

PASSAGE = ("Sea otters hold hands while they sleep so that the current does not carry them away from "
           "their group, a habit that keepers at the aquarium noticed long ago.")  # fmt: skip
WORDS = PASSAGE.split()
INDEX = {"otters": build_index([PASSAGE], 13)}


def test_normalisation_is_lowercase_without_punctuation():
    assert normalized_words("Hello, World! -- it's 3.5 o'clock.") == ["hello", "world", "its", "35", "oclock"]
    assert ngram_hashes(["a"] * 5, 13).size == 0
    assert np.array_equal(ngram_hashes(normalized_words("A b, C"), 2), ngram_hashes(["a", "b", "c"], 2))


def test_words_without_positions_equal_the_tokens_words():
    # normalized_words splits with str.split, the tokens with \S+: the same words, whatever the whitespace
    spaces = ["\u00a0", "\u2028", "\x1c", "\x85", "\u3000", "\t", "\n", " ", "\u200b", "\ufeff"]
    text = "".join(f"W{i}rd,{space}-- {space}" for i, space in enumerate(spaces * 3)) + prose(5)
    assert normalized_words(text) == [word for _, _, word in normalized_tokens(text)]
    assert normalized_words(text) == normalized_words(text)  # the memo's second answers are the first ones


def test_planted_passage_is_cut_out_and_the_rest_kept():
    before, after = prose(1), prose(2)
    text = f"{before} {PASSAGE.upper().replace(',', ';')} {after}"  # other case and punctuation still match
    result = decontaminate(text, INDEX, policy="remove_spans")
    assert result.reject is None and result.matched_ngrams["otters"] == len(WORDS) - 13 + 1
    assert result.text == f"{before} {after}" and result.removed_words == len(WORDS)


def test_drop_policy_and_too_little_left_reject_the_document():
    text = f"{prose(1)} {PASSAGE}"
    assert decontaminate(text, INDEX, policy="drop").reject == "decontamination:otters"
    mostly = f"Intro words here. {PASSAGE}"
    assert decontaminate(mostly, INDEX, policy="remove_spans", min_remaining_fraction=0.5).reject == "decontamination:otters"


def test_near_misses_with_twelve_shared_words_are_kept():
    for start in (0, 5, len(WORDS) - 12):
        near_miss = f"{prose(3)} {' '.join(WORDS[start : start + 12])} {prose(4)}"
        result = decontaminate(near_miss, INDEX, policy="drop")
        assert result.reject is None and result.matched_ngrams == {} and result.text == near_miss
    # every 13th word changed: runs of at most 12 words in common
    broken = " ".join("walruses" if i % 13 == 12 else w for i, w in enumerate(WORDS))
    assert decontaminate(broken, INDEX, policy="drop").matched_ngrams == {}


def test_step_counts_per_eval_set():
    step = DecontaminationStep(Value({**INDEX, "other": build_index([prose(9)], 13)}), 13, "remove_spans", 0.5)
    outcome = step.apply(f"{prose(1)} {PASSAGE} {prose(2)}")
    assert outcome.reject is None
    assert outcome.counts == {"decontamination[otters]:documents": 1, "decontamination[otters]:ngrams": len(WORDS) - 12,
                              "decontamination:words_removed": len(WORDS), "decontamination:documents_cut": 1}  # fmt: skip


def test_membership_by_binary_search_equals_isin():
    rng = np.random.default_rng(7)
    index = np.unique(rng.integers(0, 2**64 - 1, 500, dtype=np.uint64, endpoint=True))
    values = np.concatenate([index[rng.integers(0, len(index), 300)],  # members
                             rng.integers(0, 2**64 - 1, 300, dtype=np.uint64, endpoint=True),  # almost surely not
                             np.array([0, 2**64 - 1, index[0], index[-1]], dtype=np.uint64)])  # the ends
    assert np.array_equal(in_sorted(values, index), np.isin(values, index))
    assert in_sorted(values, index)[:300].all()
    assert not in_sorted(values, np.empty(0, dtype=np.uint64)).any()
    assert in_sorted(np.empty(0, dtype=np.uint64), index).shape == (0,)
