"""Near-dedup hash families judged by ground truth: precision and recall against exact Jaccard, and speed.

Issue 52: the default family is chosen by dedup quality, not by agreement with datasketch's bits. For each
family (`polynomial`, the default; `datasketch`, SHA-1 per shingle, bit-identical to datasketch) and for
datasketch itself, on the same peer-like documents (peer_corpus.py) with word 5-grams, 112 permutations,
14 bands x 8 rows, seed 1:
- candidate pairs (documents sharing a band) against every pair whose exact Jaccard of the shingle sets
  reaches --threshold (all pairs compared): precision and recall;
- the removals the cleaning job makes (candidates verified by exact Jaccard, union-find, all but the
  smallest id of a cluster removed): precision of the removed pairs and recall on the planted near
  duplicates (all of them, and those truly at J >= threshold);
- speed in process, one core each: signatures + band keys + LSH edges + clustering, docs/s, rounds
  alternating family by family with datasketch (MinHash + MinHashLSH), the load printed before each.

    .venv/bin/python benchmarks/bench_hash_families.py [--docs 4000] [--repeat 3] [--threshold 0.7] [--no-quality]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dedup_sides  # noqa: E402
import harness  # noqa: E402
import peer_corpus  # noqa: E402
from dedup_sides import HASH_FAMILY, bucket_pairs, exact_truth, print_removal_quality, run_datasketch, run_ours  # noqa: E402

FAMILIES = ("polynomial", "datasketch")


def score(pairs: set, truth: set) -> str:
    hit = len(pairs & truth)
    return (f"precision {hit / max(1, len(pairs)):.4f}  recall {hit / max(1, len(truth)):.4f}  "
            f"({len(pairs):,} candidate pairs)")  # fmt: skip


def quality(docs: list[dict], threshold: float) -> None:
    truth = exact_truth(docs, threshold)
    planted, of = peer_corpus.planted_near(docs), {d["id"]: d.get("of") for d in docs}
    print(f"\n## quality on {len(docs):,} documents: {len(truth):,} pairs at exact Jaccard >= {threshold}, "
          f"{len(planted):,} planted near duplicates")  # fmt: skip
    for family in FAMILIES:
        HASH_FAMILY["name"] = family
        _, ids, rows = run_ours(docs)
        print(f"  ours, {family + ' family':<18} candidates: {score(bucket_pairs(ids, rows), truth)}")
        kept_for = verified_removals(docs, threshold)
        print_removal_quality(f"ours, {family} family, verified removals", docs, kept_for, threshold, planted, of)
    _, pairs, _ = run_datasketch(docs)
    print(f"  {'datasketch library':<24} candidates: {score(pairs, truth)}")


def verified_removals(docs: list[dict], threshold: float) -> dict[str, str]:
    """{removed id: id kept in its place}, as the cleaning job decides (verified candidate edges)."""
    from marin_assets.data.dedup.dedup_keys import lsh_star_edges

    _, ids, rows = run_ours(docs)
    verify = dedup_sides.jaccard_check(docs, threshold)
    edges = [(ids[a], ids[b]) for a, b in lsh_star_edges(rows).tolist()]
    return dedup_sides.cluster_representatives(e for e in edges if verify(*e))


def speed(docs: list[dict], repeat: int) -> None:
    sides = {family: harness.Side(f"ours {family}", cores=1) for family in FAMILIES}
    peer = harness.Side("datasketch", cores=1)
    for _ in range(repeat):  # alternating: one round of each side per pass
        for family, side in sides.items():
            HASH_FAMILY["name"] = family
            side.time(lambda: run_ours(docs), len(docs))
        peer.time(lambda: run_datasketch(docs), len(docs))
    print()
    for family, side in sides.items():
        harness.report(f"near dedup in process, {family} family vs datasketch, one core each", side, peer, "docs/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=4000)
    parser.add_argument("--corpus-docs", type=int, default=10_000, help="the peer-like build whose first --docs are used")
    parser.add_argument("--repeat", type=int, default=harness.MIN_REPEATS)
    parser.add_argument("--threshold", type=float, default=0.7)
    parser.add_argument("--no-quality", dest="quality", action="store_false", help="speed rounds only")
    args = parser.parse_args()
    docs = peer_corpus.load_or_build(args.corpus_docs)[: args.docs]  # a prefix of a cached build
    print(peer_corpus.describe(peer_corpus.corpus_stats(docs)))
    HASH_FAMILY["name"] = FAMILIES[0]
    run_ours(docs[:100])  # compile or load the kernels once, outside the rounds
    HASH_FAMILY["name"] = FAMILIES[1]
    run_ours(docs[:100])
    if args.quality:
        quality(docs, args.threshold)
    speed(docs, args.repeat)


if __name__ == "__main__":
    main()
