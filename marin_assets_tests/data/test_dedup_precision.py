"""Exact Jaccard of candidate pairs and the precision report (pure)."""

import pytest

from marin_assets.data.dedup.dedup_precision import exact_jaccard, precision_report, shingle_set
from marin_assets_tests.data.planted_corpus import prose


def test_shingles_and_jaccard():
    assert shingle_set("A b c", 5) == {("a", "b", "c")}
    assert shingle_set("a b c d e f", 5) == {("a", "b", "c", "d", "e"), ("b", "c", "d", "e", "f")}
    assert exact_jaccard("a b c d e f", "A B C D E F", 5) == 1.0
    assert exact_jaccard("a b c d e f", "a b c d e g", 5) == pytest.approx(1 / 3)


def test_precision_counts_pairs_at_or_above_the_threshold_and_shows_the_worst():
    same = prose(1)
    pairs = [
        {"id_a": "a", "id_b": "b", "text_a": same, "text_b": same + " Extra words at the end."},
        {"id_a": "a", "id_b": "c", "text_a": same, "text_b": prose(2)},
    ]
    report = precision_report(pairs, 5, 0.7, worst=1)
    assert (report.pairs, report.true_pairs, report.precision) == (2, 1, 0.5)
    assert [(w["id_a"], w["id_b"]) for w in report.worst] == [("a", "c")] and report.worst[0]["jaccard"] < 0.2
    assert precision_report([], 5, 0.7).precision is None
