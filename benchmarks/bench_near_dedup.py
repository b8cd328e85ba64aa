"""Near dedup: our Spark MinHash LSH vs datasketch MinHashLSH at the same parameters.

Word 5-grams of the lower-cased text, 112 permutations, 14 bands x 8 rows. Ours: Spark local[2]
reads the JSONL, computes signatures + band keys in mapInPandas (vectorised numpy), groups band
buckets in Spark and clusters candidates with union-find. Peer: datasketch MinHash + MinHashLSH,
insert + query per document, one process. Prints docs/s of both, the ratio, and the agreement on
duplicate pairs (and on which documents are duplicates at all).

    .venv/bin/python benchmarks/bench_near_dedup.py [--docs 100000] [--workdir /tmp/bench_dedup]
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import build_corpus  # noqa: E402

from marin_assets.data.cleaning_job import lsh_buckets, near_duplicate_ids  # noqa: E402
from marin_assets.data.cleaning_recipe import CleaningRecipe, DedupSettings  # noqa: E402
from marin_assets.data.cleaning_rows import lsh_band_batches  # noqa: E402
from marin_assets.resources.spark import SparkResource  # noqa: E402

NUM_PERM, BANDS, ROWS, SHINGLE = 112, 14, 8, 5


RECIPE = CleaningRecipe(dedup=DedupSettings(num_perm=NUM_PERM, bands=BANDS, rows=ROWS, shingle_size=SHINGLE))


def _banded(spark, corpus: Path, limit: int | None = None):
    docs = spark.read.schema("id string, text string").json(str(corpus))
    docs = docs.limit(limit) if limit else docs
    return docs.mapInArrow(lsh_band_batches(RECIPE), "id string, bands array<long>").persist()


def run_ours(corpus: Path) -> tuple[float, set[tuple[str, str]], set[str]]:
    spark = SparkResource(master="local[2]", conf={"spark.driver.memory": "4g"}).get_session()
    spark.sparkContext.setLogLevel("ERROR")
    # Warm-up (not measured): JVM, Python workers and their imports, as datasketch is imported already.
    warm = _banded(spark, corpus, limit=500)
    near_duplicate_ids(warm)
    warm.unpersist()
    start = time.perf_counter()
    banded = _banded(spark, corpus)
    removed = near_duplicate_ids(banded)
    elapsed = time.perf_counter() - start
    pairs = set()
    for row in lsh_buckets(banded).collect():  # candidate pairs, for the agreement only (not timed)
        pairs.update(itertools.combinations(sorted(row["ids"]), 2))
    banded.unpersist()
    return elapsed, pairs, set(removed)


def run_datasketch(docs: list[dict]) -> tuple[float, set[tuple[str, str]]]:
    from datasketch import MinHash, MinHashLSH

    start = time.perf_counter()
    lsh = MinHashLSH(num_perm=NUM_PERM, params=(BANDS, ROWS))
    pairs = set()
    for doc in docs:
        words = doc["text"].lower().split()
        shingles = {" ".join(words[i : i + SHINGLE]).encode() for i in range(max(1, len(words) - SHINGLE + 1))}
        mh = MinHash(num_perm=NUM_PERM, seed=1)
        mh.update_batch(list(shingles))
        for other in lsh.query(mh):
            pairs.add(tuple(sorted((doc["id"], other))))
        lsh.insert(doc["id"], mh)
    return time.perf_counter() - start, pairs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench_dedup"))
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    docs = build_corpus(args.docs, args.workdir / "corpus")
    docs = [json.loads(line) for path in sorted((args.workdir / "corpus").glob("*.jsonl")) for line in open(path)]
    print(f"corpus: {len(docs):,} documents (20% exact or near duplicates)")

    ours_s, ours_pairs, removed = run_ours(args.workdir / "corpus")
    peer_s, peer_pairs = run_datasketch(docs)
    ids = [d["id"] for d in docs]
    ours_dup = {i for p in ours_pairs for i in p}
    peer_dup = {i for p in peer_pairs for i in p}
    pair_agreement = len(ours_pairs & peer_pairs) / max(1, len(ours_pairs | peer_pairs))
    doc_agreement = sum((i in ours_dup) == (i in peer_dup) for i in ids) / len(ids)
    planted = {i for i in ids if not i.startswith("doc-")}
    ours_rate, peer_rate = len(ids) / ours_s, len(ids) / peer_s
    print(f"ours (Spark local[2])     {ours_rate:10,.0f} docs/s  ({ours_s:.1f} s, {len(ours_pairs):,} pairs, "
          f"{len(removed):,} removed)")  # fmt: skip
    print(f"datasketch MinHashLSH     {peer_rate:10,.0f} docs/s  ({peer_s:.1f} s, {len(peer_pairs):,} pairs)")
    print(f"ratio ours/datasketch     {ours_rate / peer_rate:10.2f}x   (target >= 3x)")
    print(f"duplicate-pair agreement (Jaccard of pair sets) {pair_agreement:.4f}   (target >= 0.95)")
    print(f"per-document agreement (is a duplicate)         {doc_agreement:.4f}")
    print(f"planted duplicates found: ours {len(planted & ours_dup) / len(planted):.4f}, "
          f"datasketch {len(planted & peer_dup) / len(planted):.4f}")  # fmt: skip


if __name__ == "__main__":
    main()
