"""Scale of the data path: clean -> tokenize -> mixture at several corpus sizes, local and on a cluster.

For each N in --docs (a corpus from make_bench_corpus.py, built when missing) and each master
(local[2], and with --cluster a standalone cluster of 2 workers x 1 core started here), runs the
real jobs (cleaning_job.clean_source, tokenize_job.tokenize_source, mixture_build.build_mixture)
and prints docs/s, MB/s and the peak RSS of the driver (this Python process + its JVM) and of the
executors (Python workers, and the executor JVMs on a cluster) per stage. The last lines compare
the largest N with the smallest: per-document cost ratio and driver peak-RSS ratio (targets 1.2x).

    python benchmarks/scale_data_path.py --docs 2000,8000 [--cluster]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.make_bench_corpus import build  # noqa: E402
from marin_assets.core import layout  # noqa: E402
from marin_assets.core.storage import Storage  # noqa: E402
from marin_assets.data.cleaning_job import clean_source  # noqa: E402
from marin_assets.data.cleaning_recipe import load_cleaning_recipe  # noqa: E402
from marin_assets.data.sources import SourceSpec  # noqa: E402
from marin_assets.resources.spark import SparkResource  # noqa: E402
from marin_assets.resources.spark_cluster import StandaloneCluster, free_port  # noqa: E402
from marin_assets.tokenize.encoding import EncodeSettings  # noqa: E402
from marin_assets.tokenize.mixture_build import build_mixture  # noqa: E402
from marin_assets.tokenize.recipes import MixtureRecipe, TokenizerSpec  # noqa: E402
from marin_assets.tokenize.tokenize_job import STATS_FILE, cleaned_document_files, iter_documents, tokenize_source  # noqa: E402
from marin_assets.tokenize.tokenizer_files import build_tokenizer  # noqa: E402

EXECUTOR_MARKERS = ("pyspark.daemon", "pyspark/daemon.py", "pyspark.worker", "CoarseGrainedExecutorBackend")


class PeakRss:
    """Samples RSS every 0.2 s: the driver (this process + its JVM) and the executors (other trees)."""

    def __init__(self):
        self.driver = self.executors = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self):
        me = psutil.Process()
        while not self._stop.wait(0.2):
            driver = executors = 0
            for proc in [me, *_safe(me.children, True, default=[])]:
                cmd, rss = " ".join(_safe(proc.cmdline, default=[])), _safe(lambda p=proc: p.memory_info().rss)
                if any(m in cmd for m in EXECUTOR_MARKERS):
                    executors += rss
                elif proc.pid == me.pid or "java" in cmd.split(" ", 1)[0]:
                    driver += rss
            for proc in psutil.process_iter(["cmdline"]):  # cluster executors are the workers' children
                if "CoarseGrainedExecutorBackend" in " ".join(proc.info["cmdline"] or []) and _belongs_to_bench(proc):
                    tree = [proc, *_safe(proc.children, True, default=[])]
                    executors += sum(_safe(lambda p=p: p.memory_info().rss) for p in tree)
            self.driver, self.executors = max(self.driver, driver), max(self.executors, executors)


def _safe(fn, *args, default=0):
    """A process may exit between listing and reading it (Spark's Python workers come and go)."""
    try:
        return fn(*args)
    except psutil.Error:
        return default


_BENCH_WORK_DIRS: list[str] = []


def _belongs_to_bench(proc) -> bool:
    try:
        return any(proc.cwd().startswith(d) for d in _BENCH_WORK_DIRS)
    except psutil.Error:
        return False


def run_size(n: int, master: str, corpus_root: Path, work: Path) -> list[dict]:
    corpus = corpus_root / str(n)
    if not corpus.exists():
        build(n, corpus)
    mb = sum(f.stat().st_size for f in corpus.glob("*.jsonl.gz")) / 1e6  # MB/s: of the gzipped input files
    spark = SparkResource(master=master, conf={"spark.sql.shuffle.partitions": "4"}).get_session()
    spark.sparkContext.setLogLevel("ERROR")
    store, rows = Storage(str(work)), []
    spec = SourceSpec(name="bench", uri=str(corpus / "*.jsonl.gz"), format="jsonl.gz", license="GPL-2.0-or-later")
    recipe = load_cleaning_recipe()

    def stage(name, docs, fn):
        with PeakRss() as rss:
            start = time.perf_counter()
            result = fn()
            seconds = time.perf_counter() - start
        rows.append({"N": n, "master": master.split(":")[0], "stage": name, "docs": docs, "s": seconds,
                     "docs/s": docs / seconds, "MB/s": mb / seconds, "driver MB": rss.driver / 2**20,
                     "executors MB": rss.executors / 2**20})  # fmt: skip
        return result

    with store.atomic_dir(layout.CLEANED, "bench") as staged:
        stats = stage("clean", n, lambda: clean_source(spark, spec, recipe, staged.path))
    files = cleaned_document_files(store, "bench")
    tok_dir = str(work / "tokenizer")
    sample = [t for batch in iter_documents(files, 2000) for t in batch["text"]][:2000]
    summary = build_tokenizer(TokenizerSpec(name="bench", vocab_size=1024), sample, tok_dir)
    settings = EncodeSettings(tok_dir, summary.hash, True, True, 1000)
    with store.atomic_dir(layout.TOKENIZED, "bench") as staged:
        tstats = stage("tokenize", stats["kept"],
                       lambda: tokenize_source(spark, files, "bench", staged.path, settings, 20_000))  # fmt: skip
        staged.write_json(tstats, STATS_FILE)
    mixture = MixtureRecipe(weights={"bench": 1.0}, epochs=1.0, validation_fraction=0.01, seq_len=128)
    with store.atomic_dir(layout.MIXTURES, "bench") as staged:
        stage("mixture", stats["kept"], lambda: build_mixture(store, "bench", mixture, summary, tok_dir, ["bench"], staged))
    spark.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", default="2000,8000", help="comma-separated corpus sizes")
    parser.add_argument("--cluster", action="store_true", help="also on a standalone cluster (2 workers x 1 core)")
    parser.add_argument("--corpus-root", type=Path, default=Path(tempfile.gettempdir()) / "marin-bench-corpus")
    args = parser.parse_args()
    sizes = [int(s) for s in args.docs.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="marin-scale-") as tmp:
        cluster = None
        if args.cluster:
            cluster = StandaloneCluster(Path(tmp) / "cluster", port=free_port()).start(timeout=300)
            _BENCH_WORK_DIRS.append(str(cluster.state_dir))
        try:
            masters = ["local[2]"] + ([cluster.master_url] if cluster else [])
            for master in masters:
                for n in sizes:
                    os.environ.pop("SPARK_LOCAL_IP", None)
                    rows += run_size(n, master, args.corpus_root, Path(tmp) / f"{master[:5]}-{n}")
        finally:
            if cluster:
                cluster.stop()
    print(f"{'N':>8} {'master':>7} {'stage':>9} {'docs':>8} {'s':>7} {'docs/s':>9} {'MB/s':>6} {'driver MB':>9} {'exec MB':>8}")
    for r in rows:
        print(f"{r['N']:>8} {r['master']:>7} {r['stage']:>9} {r['docs']:>8} {r['s']:>7.1f} {r['docs/s']:>9.0f} "
              f"{r['MB/s']:>6.2f} {r['driver MB']:>9.0f} {r['executors MB']:>8.0f}")
    lo, hi = min(sizes), max(sizes)
    for master in sorted({r["master"] for r in rows}):
        for stage_name in ("clean", "tokenize", "mixture"):
            a = next(r for r in rows if r["N"] == lo and r["master"] == master and r["stage"] == stage_name)
            b = next(r for r in rows if r["N"] == hi and r["master"] == master and r["stage"] == stage_name)
            print(f"{master} {stage_name}: per-doc cost N={hi} vs N={lo}: {(b['s'] / b['docs']) / (a['s'] / a['docs']):.2f}x"
                  f" (target <= 1.2x); driver peak RSS {b['driver MB'] / max(a['driver MB'], 1e-9):.2f}x (target <= 1.2x)")


if __name__ == "__main__":
    main()
