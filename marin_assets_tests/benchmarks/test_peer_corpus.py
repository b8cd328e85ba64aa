"""The peer-like benchmark corpus: real Debian texts first, recombined ones labelled when they run out,
planted duplicates with larger ids than their originals, and the statistics every benchmark prints."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import peer_corpus  # noqa: E402


def _fake_root(tmp_path: Path) -> str:
    for pkg in ("alpha", "beta"):
        folder = tmp_path / "doc" / pkg
        folder.mkdir(parents=True)
        entries = "\n\n".join(f"{pkg} ({v}.0) unstable; urgency=low\n\n  * Fixed bug number {v} in the {pkg} parser "
                              f"and its handling of long input lines {'x' * 300}" for v in range(6))  # fmt: skip
        (folder / "changelog.Debian.gz").write_bytes(gzip.compress(entries.encode()))
        (folder / "copyright").write_text(f"Copyright {pkg} authors.\n\n" + "Permission is granted to use it. " * 30)
    return str(tmp_path)


def test_build_labels_recombined_originals_and_plants_duplicates_after_their_originals(tmp_path):
    docs = peer_corpus.build(50, root=_fake_root(tmp_path))
    by_id = {d["id"]: d for d in docs}
    assert len(docs) == 50 and len(by_id) == 50
    copies = [d for d in docs if d["origin"].endswith("_duplicate")]
    assert len(copies) == 10 and all(d["of"] < d["id"] and d["of"] in by_id for d in copies)
    exact = [d for d in copies if d["origin"] == "exact_duplicate"]
    assert exact and all(d["text"] == by_id[d["of"]]["text"] for d in exact)
    assert all(d["text"] != by_id[d["of"]]["text"] for d in copies if d["origin"] == "near_duplicate")
    stats = peer_corpus.corpus_stats(docs)
    # two packages hold far fewer than 40 originals: the rest are recombined, and the share says so
    assert 0 < stats["recombined_share"] < 0.8 and stats["duplicate_share"] == 0.2
    assert "recombined originals" in peer_corpus.describe(stats)


def test_distinct_chunk_share_counts_whitespace_chunks():
    stats = peer_corpus.corpus_stats([{"id": "a", "text": "x y x"}, {"id": "b", "text": "x z"}])
    assert stats["distinct_chunk_share"] == 3 / 5 and stats["recombined_share"] == 0
