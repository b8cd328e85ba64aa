"""bench_near_dedup's sides: the datasketch pool decides like one datasketch process, the decision rule is
datasketch's own, and the Debian corpus keeps only planted duplicates whose original it holds."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_near_dedup  # noqa: E402
import dedup_sides  # noqa: E402

BASE = "the quick brown fox jumps over the lazy dog while a small river runs past an old mill "


def _docs() -> list[dict]:
    docs = [{"id": f"d{i:02d}", "text": BASE * 3 + f"unique tail {i} " * 20} for i in range(12)]
    docs.append({"id": "d99", "text": docs[3]["text"]})  # an exact copy of d03
    return docs


def test_pool_decides_like_one_process_and_the_rule_is_datasketchs(capsys):
    docs = _docs()
    removed, pairs, signatures = dedup_sides.run_datasketch(docs)
    assert "d99" in removed and ("d03", "d99") in pairs
    pool = dedup_sides.DatasketchPool(2)
    try:
        pool_removed, pool_pairs, pool_signatures = pool(docs)
        other_seed = pool.signatures(docs, seed=dedup_sides.SEED + 1)
        dedup_sides.print_seed_reference(docs, pool, pairs, 0.7)
    finally:
        pool.close()
    assert (pool_removed, pool_pairs) == (removed, pairs)
    assert all((pool_signatures[i] == signatures[i]).all() for i in signatures)
    # the seed reference hashes with other permutations: other signatures, one agreement line printed
    assert not (other_seed == np.stack([signatures[d["id"]] for d in docs])).all()
    assert "reference, datasketch seed 2 vs datasketch seed 1" in capsys.readouterr().out
    dedup_sides.check_same_rule(removed, pairs, signatures)
    assert "removes the same documents: True" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="decision rule differs"):
        dedup_sides.check_same_rule(removed - {"d99"}, pairs, signatures)


def test_debian_corpus_subset_keeps_planted_duplicates_of_originals_it_holds(tmp_path):
    source = tmp_path / "build"
    (source / "text").mkdir(parents=True)
    docs = [{"id": f"dbc-{i}", "url": "u", "text": f"text {i}", "metadata": {}} for i in range(5)]
    (source / "text" / "part-00000.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    planted = [{"id": "dbc-2", "of": "dbc-0"}, {"id": "dbc-4", "of": "dbc-1"}]
    (source / "planted_duplicates.jsonl").write_text("".join(json.dumps(p) + "\n" for p in planted))
    subset, kept = bench_near_dedup.debian_corpus(source, 3, tmp_path / "out")
    assert [d["id"] for d in subset] == ["dbc-0", "dbc-1", "dbc-2"] and kept == {"dbc-2"}
    assert sorted(d["id"] for d in bench_near_dedup.read_jsonl(tmp_path / "out")) == ["dbc-0", "dbc-1", "dbc-2"]


def test_verification_keeps_an_lsh_false_positive_and_the_quality_line_scores_removed_pairs(capsys):
    text = " ".join(f"word{i}" for i in range(40))
    docs = [{"id": "a", "text": text}, {"id": "b", "text": "entirely different words " * 10},
            {"id": "c", "text": text + " one more"}]  # fmt: skip
    ids = [d["id"] for d in docs]
    # band 0: a and b share a key (an LSH false positive), band 1: a and c (a true near duplicate)
    rows = np.array([[1, 2], [1, 3], [4, 2]], dtype=np.uint64)
    assert dedup_sides.near_dedup(ids, rows) == {"b", "c"}
    assert dedup_sides.near_dedup(ids, rows, dedup_sides.jaccard_check(docs, 0.7)) == {"c"}
    assert dedup_sides.print_removal_quality("raw", docs, {"b": "a", "c": "a"}, 0.7, {"c"}) == (0.5, 1.0)
    assert dedup_sides.print_removal_quality("verified", docs, {"c": "a"}, 0.7, {"c"}) == (1.0, 1.0)
    assert "precision of removed pairs 0.5000" in capsys.readouterr().out
    # b is planted as a copy of a but is no near duplicate of it: recall counts it, the true-pair recall does not
    dedup_sides.print_removal_quality("verified", docs, {"c": "a"}, 0.7, {"b", "c"}, {"b": "a", "c": "a"})
    assert "recall 0.5000 (2 planted), 1.0000 of the 1 at J >= 0.7" in capsys.readouterr().out
