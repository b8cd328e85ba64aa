"""Benchmark: the mixture step's driver memory and time at 100k and 1M documents (issue 12: driver peak flat).

    .venv/bin/python benchmarks/mixture_scale.py [--docs 100000,1000000] [--corpus /tmp/marin_bench_corpus-100000]
        [--plan-memory-documents N]

scale_data_path.py runs the whole data path; this benchmark runs the mixture step alone, at sizes the
whole path cannot reach in a session. The mixture step runs in the driver (this Python process). Its
per-document state (a hash and a length a document, the planner's key histograms, the writer's windows) is
read from local files in chunks of the recipe's plan_memory_documents (--plan-memory-documents; default the
recipe's), so above that many documents the driver peak should stay flat. This benchmark runs the product's
build_mixture (footer checks, plan, external sort of the train order, one-read shuffle writer, mixture.json) on
token shards of N documents whose lengths are the Debian corpus's (cleaned text, UTF-8 bytes / 4 + BOS/EOS,
cycled to reach N) and random token ids, two sources weighted 0.8 / 0.2 as in scale_data_path.py.

Each size runs in a fresh process: shards are written first (not measured), then build_mixture runs while a
thread samples this process's RSS every 0.05 s. Printed per size: documents, tokens, wall time, docs/s, RSS
at the start and peak RSS; then the per-document cost ratio and the peak RSS ratio of each size against the
next smaller one (targets: 1.2x each).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TARGET = 1.2
WEIGHTS = {"bench_text": 0.8, "bench_html": 0.2}
SHARD_DOCS = {"token": 20_000, "mixture": 50_000}  # the shipped documents_per_shard of both recipes


def corpus_lengths(corpus: Path) -> np.ndarray:
    lengths = [len(json.loads(line)["text"].encode()) // 4 + 2
               for path in sorted(glob.glob(f"{corpus}/text/*.jsonl")) for line in open(path)]  # fmt: skip
    if not lengths:
        raise SystemExit(f"no documents under {corpus}/text: build it with benchmarks/make_bench_corpus.py")
    return np.asarray(lengths, np.int64)


def write_source(storage, name: str, lengths: np.ndarray, tokenizer_hash: str, rng) -> None:
    from marin_assets.core import layout
    from marin_assets.tokenize.shards import SHARD_PATTERN, shard_table, token_lists, write_shard
    from marin_assets.tokenize.tokenize_job import STATS_FILE

    with storage.atomic_dir(layout.TOKENIZED, name) as staged:
        for k, lo in enumerate(range(0, len(lengths), SHARD_DOCS["token"])):
            part = lengths[lo : lo + SHARD_DOCS["token"]]
            offsets = np.concatenate([[0], np.cumsum(part)]).astype(np.int32)
            values = rng.integers(0, 8192, int(part.sum()), dtype=np.int32)
            ids = [f"{name}-{i:09d}" for i in range(lo, lo + len(part))]
            table = shard_table(ids, [name] * len(part), token_lists(offsets, values), tokenizer_hash)
            write_shard(table, staged.join(SHARD_PATTERN.format(k)))
        staged.write_json({"tokenizer_hash": tokenizer_hash}, STATS_FILE)


def run_one(n_docs: int, corpus: Path, plan_memory_documents: int | None) -> dict:
    from marin_assets.core import layout
    from marin_assets.core.storage import Storage
    from marin_assets.tokenize.mixture_build import build_mixture
    from marin_assets.tokenize.tokenize_recipe import MixtureRecipe
    from marin_assets.tokenize.tokenizer_files import TokenizerSummary

    lengths = np.resize(corpus_lengths(corpus), n_docs)
    tokenizer = TokenizerSummary("bench-tokenizer", 8192, 0, 1, 2, {})
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="marin_mixture_scale_") as work:
        storage = Storage(work)
        cut = int(n_docs * WEIGHTS["bench_text"])  # 80% of the documents in the text source
        write_source(storage, "bench_text", lengths[:cut], tokenizer.hash, rng)
        write_source(storage, "bench_html", lengths[cut:], tokenizer.hash, rng)
        bound = {"plan_memory_documents": plan_memory_documents} if plan_memory_documents else {}
        recipe = MixtureRecipe(weights=WEIGHTS, epochs=1.0, seq_len=1024, documents_per_shard=SHARD_DOCS["mixture"],
                               **bound)  # fmt: skip
        me = psutil.Process()
        start_rss, peak, stop = me.memory_info().rss, [0], threading.Event()

        def sample() -> None:
            while not stop.wait(0.05):
                peak[0] = max(peak[0], me.memory_info().rss)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        began = time.perf_counter()
        with storage.atomic_dir(layout.MIXTURES, "bench") as staged:
            info, _ = build_mixture(storage, "bench", recipe, tokenizer, "unused", list(WEIGHTS), staged)
        wall = time.perf_counter() - began
        stop.set()
        sampler.join()
    return {"docs": n_docs, "tokens": int(lengths.sum()), "wall_s": wall, "start_rss": start_rss,
            "peak_rss": max(peak[0], start_rss), "train_documents": info["train_documents"]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", default="100000,1000000", help="comma-separated sizes")
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/marin_bench_corpus-100000"))
    parser.add_argument("--plan-memory-documents", type=int, help="the mixture recipe's bound (default: its default)")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: run one size, print JSON
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.corpus, args.plan_memory_documents)))
        return
    runs = []
    for n in (int(x) for x in args.docs.split(",")):
        print(f"{n:,} documents ...", file=sys.stderr, flush=True)
        cmd = [sys.executable, __file__, "--one", str(n), "--corpus", str(args.corpus)]
        cmd += ["--plan-memory-documents", str(args.plan_memory_documents)] if args.plan_memory_documents else []
        done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{'docs':>10} {'tokens':>12} {'wall s':>8} {'docs/s':>9} {'RSS start MB':>13} {'RSS peak MB':>12}")
    for r in runs:
        print(f"{r['docs']:>10,} {r['tokens']:>12,} {r['wall_s']:>8.1f} {r['docs'] / r['wall_s']:>9,.0f} "
              f"{r['start_rss'] / 2**20:>13,.0f} {r['peak_rss'] / 2**20:>12,.0f}")  # fmt: skip
    for small, large in zip(runs, runs[1:]):
        cost = (large["wall_s"] / large["docs"]) / (small["wall_s"] / small["docs"])
        rss = large["peak_rss"] / small["peak_rss"]
        verdict = lambda ok: "MET" if ok else "NOT MET"  # noqa: E731
        print(f"{small['docs']:,} -> {large['docs']:,}: per-document cost {cost:.2f}x (target <= {TARGET}x: "
              f"{verdict(cost <= TARGET)}); driver peak RSS {rss:.2f}x (target <= {TARGET}x: {verdict(rss <= TARGET)})")
    print(f"plan_memory_documents: {args.plan_memory_documents or 'the recipe default'}")
    print(f"cores: {os.cpu_count()}, load average now: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
