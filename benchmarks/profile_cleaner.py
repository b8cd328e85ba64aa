"""RecordCleaner in one process on the cleaning benchmark's documents: docs/s, where the time goes, a digest.

The same documents and recipe as bench_cleaning_filters.py (its corpus, language id, dedup and reflow
off), cleaned by RecordCleaner.clean_many in batches as clean_batches does, without Spark: the
one-core rate the Spark job's two workers are compared with. --profile prints cProfile's top
functions by own time; the digest (sha256 over every output row) shows whether a change to the filters
moved any decision or output byte. --recipe shipped runs the shipped cleaning recipe instead (reflow,
language id, C4's max_removed_frac on).

    .venv/bin/python benchmarks/profile_cleaner.py [--docs 10000] [--repeat 3] [--profile]
        [--workdir /tmp/profile_cleaner] [--recipe bench|shipped]
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cleaning_filters import recipe as bench_recipe  # noqa: E402
from corpus import build_corpus  # noqa: E402
import peer_corpus  # noqa: E402

from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe  # noqa: E402
from marin_assets.data.clean.cleaning_rows import ROW_COLUMNS, RecordCleaner  # noqa: E402

BATCH = 1_000  # records per clean_many call (an Arrow batch's worth)


def load_docs(n_docs: int, workdir: Path, kind: str = "peer") -> list[dict]:
    """The peer-like Debian corpus (peer_corpus.py), or the generated one (built once per workdir and size)."""
    if kind == "peer":
        return peer_corpus.load_or_build(n_docs)
    corpus = workdir / f"corpus-{n_docs}"
    if not corpus.exists():
        build_corpus(n_docs, corpus)
    return [json.loads(line) for path in sorted(corpus.glob("*.jsonl")) for line in path.open()]


def records(docs: list[dict]) -> list[dict]:
    return [{"kind": "record", "id": d["id"], "url": None, "content": d["text"], "content_type": "text",
             "metadata": "{}", "raw_length": len(d["text"]), "file": "bench.jsonl", "offset": i, "reason": None,
             "excerpt": None} for i, d in enumerate(docs)]  # fmt: skip


def clean_all(cleaner: RecordCleaner, recs: list[dict]) -> list[dict]:
    return [row for i in range(0, len(recs), BATCH) for row in cleaner.clean_many(recs[i : i + BATCH])]


def digest(rows: list[dict]) -> str:
    h = hashlib.sha256()
    for row in rows:
        h.update(json.dumps([row[c] for c in ROW_COLUMNS], default=str).encode())
    return h.hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="print cProfile's top functions (one more round)")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/profile_cleaner"))
    parser.add_argument("--recipe", choices=("bench", "shipped"), default="bench")
    parser.add_argument("--corpus", choices=("peer", "generated"), default="peer",
                        help="peer: the peer-like Debian corpus; generated: benchmarks/corpus.py (best case for the memo)")
    args = parser.parse_args()
    docs = load_docs(args.docs, args.workdir, args.corpus)
    print(peer_corpus.describe(peer_corpus.corpus_stats(docs), args.corpus))
    recs = records(docs)
    cleaner = RecordCleaner(bench_recipe() if args.recipe == "bench" else load_cleaning_recipe(), "bench")
    # warm-up on another corpus (imports, rule tables), not on these documents' own chunks
    clean_all(cleaner, records(build_corpus(200, args.workdir / "warmup", seed=1)))
    rates, rows = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        rows = clean_all(cleaner, recs)
        rates.append(len(recs) / (time.perf_counter() - start))
    kept = sum(row["status"] == "kept" for row in rows)
    if rates:
        print(f"{len(recs):,} documents, recipe {args.recipe}: {kept:,} kept; in process (one core) median "
              f"{statistics.median(rates):,.0f} docs/s (range {min(rates):,.0f}-{max(rates):,.0f}, {len(rates)} runs); "
              f"digest {digest(rows)}")  # fmt: skip
    print("round 1 meets every chunk for the first time in this process (what a Spark worker does); later rounds "
          "reuse the word memo it filled: quote round 1")  # fmt: skip
    print("per round docs/s: " + ", ".join(f"{r:,.0f}" for r in rates))
    if args.profile:  # a fresh process's first pass is the honest profile: run with --repeat 0 --profile
        profiler = cProfile.Profile()
        profiler.runcall(clean_all, cleaner, recs)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
