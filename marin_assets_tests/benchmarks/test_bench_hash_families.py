"""bench_hash_families: removals are verified by exact Jaccard and scores count against the truth given."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_hash_families  # noqa: E402
from dedup_sides import HASH_FAMILY  # noqa: E402


def test_each_family_removes_the_true_copy_and_keeps_a_stranger(monkeypatch):
    text = " ".join(f"word{i}" for i in range(80))
    docs = [{"id": "a", "text": text}, {"id": "b", "text": "entirely different words here " * 20},
            {"id": "c", "text": text + " one more"}]  # fmt: skip
    for family in bench_hash_families.FAMILIES:
        monkeypatch.setitem(HASH_FAMILY, "name", family)  # restored after the test
        assert bench_hash_families.verified_removals(docs, 0.7) == {"c": "a"}, family


def test_score_is_precision_and_recall_against_the_truth():
    truth = {("a", "b"), ("a", "c")}
    assert bench_hash_families.score({("a", "b"), ("b", "c")}, truth).startswith("precision 0.5000  recall 0.5000")
    assert bench_hash_families.score(set(), truth).startswith("precision 0.0000  recall 0.0000")
