"""Near dedup: our MinHash LSH vs datasketch MinHashLSH, one process each, same documents and parameters.

Word 5-grams of the lower-cased text, 112 permutations, 14 bands x 8 rows, seed 1. Both sides start
from the same in-memory documents and end with the same decision rule: candidate pairs (documents
sharing a band) are clustered with union-find and all but the smallest id of a cluster are removed.
Ours: MinHasher.signatures + band_key_matrix on batches (what the Spark job's mapInArrow runs),
lsh_star_edges (the edges near_duplicates builds in Spark) and cluster_representatives.
Peer: datasketch MinHash(update_batch, permutations shared across documents) + MinHashLSH query +
insert per document.

Decisions. The hash functions differ (datasketch: SHA-1 per shingle and 61-bit Mersenne affine
permutations; ours: numpy polynomial hashes and 32-bit affine permutations), so a handful of
borderline pairs can fall differently; the script prints the agreement. The decision rule itself is
checked to be identical: our LSH and clustering run on datasketch's own signatures must flag exactly
the documents datasketch flags (and find exactly its candidate pairs). With --spark it also runs the
Spark job's path (local[2], from the files) against the same datasketch figure, and checks it
removes exactly what ours removed.

Precision and recall: on a second corpus (--quality-docs, default 4,000) every pair's exact Jaccard
of 5-gram shingle sets is computed (sparse matrix products); pairs at or above --threshold are the
ground truth, and each side's candidate pairs are scored against it.

    .venv/bin/python benchmarks/bench_near_dedup.py [--docs 30000] [--workdir /tmp/bench_dedup] [--spark]
                                                    [--quality-docs 4000] [--threshold 0.7]
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import build_corpus  # noqa: E402

from marin_assets.data.dedup import MinHasher, band_key_matrix, cluster_representatives, lsh_star_edges  # noqa: E402

NUM_PERM, BANDS, ROWS, SHINGLE, SEED = 112, 14, 8, 5, 1
BATCH = 10_000  # Spark's default Arrow batch size (spark.sql.execution.arrow.maxRecordsPerBatch)


def near_dedup(ids: list[str], band_key_rows: np.ndarray) -> set[str]:
    """Removed ids, from one row of band keys per id (rows in id order)."""
    edges = lsh_star_edges(band_key_rows)
    return set(cluster_representatives((ids[rep], ids[member]) for rep, member in edges.tolist()))


def run_ours(docs: list[dict]) -> tuple[float, set[str], list[str], np.ndarray]:
    start = time.perf_counter()
    docs = sorted(docs, key=lambda d: d["id"])
    hasher = MinHasher(NUM_PERM, SHINGLE, SEED)
    ids, keys = [], []
    for lo in range(0, len(docs), BATCH):
        batch = docs[lo : lo + BATCH]
        signatures, has_words = hasher.signatures([d["text"] for d in batch])
        keys.append(band_key_matrix(signatures[has_words], BANDS, ROWS))
        ids.extend(d["id"] for d, words in zip(batch, has_words) if words)
    band_key_rows = np.concatenate(keys)
    removed = near_dedup(ids, band_key_rows)
    return time.perf_counter() - start, removed, ids, band_key_rows


def run_datasketch(docs: list[dict]) -> tuple[float, set[str], set[tuple[str, str]], dict]:
    from datasketch import MinHash, MinHashLSH

    start = time.perf_counter()
    lsh = MinHashLSH(num_perm=NUM_PERM, params=(BANDS, ROWS))
    template = MinHash(num_perm=NUM_PERM, seed=SEED)  # its permutations are reused, as datasketch advises
    pairs, signatures = set(), {}
    for doc in docs:
        words = doc["text"].lower().split()
        grams = {" ".join(gram) for gram in zip(*(words[i:] for i in range(SHINGLE)))} or {" ".join(words)}
        mh = MinHash(num_perm=NUM_PERM, seed=SEED, permutations=template.permutations, scheme=template.scheme)
        mh.update_batch([gram.encode() for gram in grams])
        for other in lsh.query(mh):
            pairs.add(tuple(sorted((doc["id"], other))))
        lsh.insert(doc["id"], mh)
        signatures[doc["id"]] = mh.hashvalues
    removed = set(cluster_representatives(pairs))
    return time.perf_counter() - start, removed, pairs, signatures


def bucket_pairs(ids: list[str], band_key_rows: np.ndarray) -> set[tuple[str, str]]:
    """All candidate pairs (documents sharing a band key), for the agreement only (not timed)."""
    buckets = defaultdict(list)
    for doc_id, keys in zip(ids, band_key_rows.tolist()):
        for band, key in enumerate(keys):
            buckets[band, key].append(doc_id)
    return {pair for members in buckets.values() for pair in itertools.combinations(sorted(members), 2)}


def check_same_rule(peer_removed, peer_pairs, peer_signatures) -> None:
    """Our LSH + clustering on datasketch's signatures must reproduce datasketch's decisions exactly."""
    ids = sorted(peer_signatures)
    rows = band_key_matrix(np.stack([peer_signatures[i] for i in ids]), BANDS, ROWS)
    same_removed = near_dedup(ids, rows) == peer_removed
    same_pairs = bucket_pairs(ids, rows) == peer_pairs
    print(f"same rule: ours on datasketch's signatures removes the same documents: {same_removed}, "
          f"finds the same candidate pairs: {same_pairs}")  # fmt: skip
    if not (same_removed and same_pairs):
        raise SystemExit("decision rule differs from datasketch's")


def exact_truth(docs: list[dict], threshold: float) -> set[tuple[str, str]]:
    """Every pair with exact Jaccard >= threshold of the 5-gram shingle sets (all pairs, sparse products)."""
    from scipy import sparse

    from marin_assets.data.dedup_precision import shingle_set

    ids = sorted(d["id"] for d in docs)
    text = {d["id"]: d["text"] for d in docs}
    vocab: dict[tuple, int] = {}
    rows, cols = [], []
    for r, doc_id in enumerate(ids):
        for shingle in shingle_set(text[doc_id], SHINGLE):
            rows.append(r)
            cols.append(vocab.setdefault(shingle, len(vocab)))
    a = sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(len(ids), len(vocab)))
    sizes = np.asarray(a.sum(axis=1)).ravel()
    truth = set()
    for lo in range(0, len(ids), 500):  # blocks of rows: a dense 500 x N intersection matrix at a time
        inter = (a[lo : lo + 500] @ a.T).toarray()
        union = sizes[lo : lo + 500, None] + sizes[None, :] - inter
        for i, j in zip(*np.nonzero(inter >= threshold * np.maximum(union, 1))):
            if lo + i < j:
                truth.add((ids[lo + i], ids[j]))
    return truth


def precision_recall(name: str, pairs: set[tuple[str, str]], truth: set[tuple[str, str]]) -> None:
    hit = len(pairs & truth)
    print(f"  {name:<28} precision {hit / max(1, len(pairs)):.4f}  recall {hit / max(1, len(truth)):.4f}  "
          f"({len(pairs):,} candidate pairs, {len(truth):,} true pairs)")  # fmt: skip


def run_quality(docs: int, workdir: Path, threshold: float) -> None:
    """Precision and recall of the candidate pairs against exact-Jaccard ground truth (a smaller corpus)."""
    build_corpus(docs, workdir / "quality_corpus", seed=1)
    corpus = [json.loads(line) for path in sorted((workdir / "quality_corpus").glob("*.jsonl")) for line in open(path)]
    truth = exact_truth(corpus, threshold)
    _, _, ids, band_key_rows = run_ours(corpus)
    _, _, peer_pairs, _ = run_datasketch(corpus)
    print(f"candidate pairs vs exact Jaccard >= {threshold} on {len(corpus):,} documents (all pairs compared):")
    precision_recall("ours (14 bands x 8 rows)", bucket_pairs(ids, band_key_rows), truth)
    precision_recall("datasketch (14 x 8)", {tuple(sorted(p)) for p in peer_pairs}, truth)


def run_spark(corpus: Path, expected_removed: set[str], peer_rate: float) -> None:
    """The Spark job's path (mapInArrow band keys, near_duplicates: components in Spark), local[2]; must remove
    the same ids (collected here to compare; the job itself never collects them).

    It starts from the JSONL files (Spark reads them), so it also pays for parsing and Arrow transfer.
    """
    from marin_assets.data.cleaning_job import near_duplicates
    from marin_assets.data.cleaning_recipe import CleaningRecipe, DedupSettings
    from marin_assets.data.cleaning_rows import lsh_band_batches
    from marin_assets.resources.spark import SparkResource

    recipe = CleaningRecipe(dedup=DedupSettings(num_perm=NUM_PERM, bands=BANDS, rows=ROWS, shingle_size=SHINGLE))
    spark = SparkResource(master="local[2]", conf={"spark.driver.memory": "4g"}).get_session()
    spark.sparkContext.setLogLevel("ERROR")
    docs = spark.read.schema("id string, text string").json(str(corpus))
    def near_duplicate_ids(frame) -> list[str]:
        return [r["member"] for r in near_duplicates(frame).collect()]

    near_duplicate_ids(docs.limit(500).mapInArrow(lsh_band_batches(recipe), "id string, bands array<long>"))  # warm-up
    start = time.perf_counter()
    removed = near_duplicate_ids(docs.mapInArrow(lsh_band_batches(recipe), "id string, bands array<long>"))
    elapsed = time.perf_counter() - start
    rate = docs.count() / elapsed
    print(f"Spark job path (local[2], from files) {rate:8,.0f} docs/s ({elapsed:.1f} s); "
          f"ratio to datasketch {rate / peer_rate:.2f}x; removes the same documents as ours: "
          f"{set(removed) == expected_removed}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=30_000)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench_dedup"))
    parser.add_argument("--spark", action="store_true", help="also time the Spark job path (local[2])")
    parser.add_argument("--quality-docs", type=int, default=4000, help="corpus size for precision / recall (0: skip)")
    parser.add_argument("--threshold", type=float, default=0.7, help="exact Jaccard of a true near duplicate")
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    build_corpus(args.docs, args.workdir / "corpus")
    docs = [json.loads(line) for path in sorted((args.workdir / "corpus").glob("*.jsonl")) for line in open(path)]
    print(f"corpus: {len(docs):,} documents (20% exact or near duplicates); one process each side")

    ours_s, ours_removed, ids, band_key_rows = run_ours(docs)
    peer_s, peer_removed, peer_pairs, peer_signatures = run_datasketch(docs)
    ours_pairs = bucket_pairs(ids, band_key_rows)
    all_ids = [d["id"] for d in docs]
    planted = {i for i in all_ids if not i.startswith("doc-")}
    ours_rate, peer_rate = len(docs) / ours_s, len(docs) / peer_s
    print(f"ours (MinHasher, numpy)   {ours_rate:10,.0f} docs/s  ({ours_s:.1f} s, {len(ours_pairs):,} pairs, "
          f"{len(ours_removed):,} removed)")  # fmt: skip
    print(f"datasketch MinHashLSH     {peer_rate:10,.0f} docs/s  ({peer_s:.1f} s, {len(peer_pairs):,} pairs, "
          f"{len(peer_removed):,} removed)")  # fmt: skip
    print(f"ratio ours/datasketch     {ours_rate / peer_rate:10.2f}x   (target >= 3x)")
    differ = ours_removed ^ peer_removed
    print(f"removed documents: {len(differ)} of {len(docs):,} decided differently "
          f"(agreement {1 - len(differ) / len(docs):.5f}); Jaccard of removed sets "
          f"{len(ours_removed & peer_removed) / max(1, len(ours_removed | peer_removed)):.5f}")  # fmt: skip
    print(f"candidate-pair agreement (Jaccard of pair sets) "
          f"{len(ours_pairs & peer_pairs) / max(1, len(ours_pairs | peer_pairs)):.4f}   (target >= 0.95)")  # fmt: skip
    print(f"planted duplicates removed: ours {len(planted & ours_removed) / len(planted):.4f}, "
          f"datasketch {len(planted & peer_removed) / len(planted):.4f}")  # fmt: skip
    check_same_rule(peer_removed, peer_pairs, peer_signatures)
    if args.quality_docs:
        run_quality(args.quality_docs, args.workdir, args.threshold)
    if args.spark:
        run_spark(args.workdir / "corpus", ours_removed, peer_rate)


if __name__ == "__main__":
    main()
