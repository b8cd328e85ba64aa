"""Benchmark: clean + tokenize + mixture at several corpus sizes; docs/s, MB/s and peak RSS per stage.

    .venv/bin/python benchmarks/scale_data_path.py --docs 10000,100000 [--master local[2]|spark://127.0.0.1:7077]

Each size runs in its own process (so one size's peak memory does not hide another's) on the Debian
documentation corpus of benchmarks/make_bench_corpus.py (built at <corpus-root>-<N> when missing), as
two sources of a temporary sources recipe (MARIN_RECIPES_DIR): plain text (JSONL) and HTML pages
(WARC.gz). Stages call the product's entry points: cleaning_job.clean_source (Spark),
tokenize_job.tokenize_source and mixture_build.build_mixture, under a Storage root in a temp folder.
Peak RSS is sampled (psutil, every 0.2 s) over this process's tree: "driver" = this Python process,
"driver JVM" = SparkSubmit (in local mode it also runs the executor threads), "workers" = the other
processes (Spark Python workers, tokenizer pool) plus, for a standalone cluster, every
CoarseGrainedExecutorBackend JVM on the machine and its children. Targets (issue 12): per-document
cost of the largest size within 1.2x of the next smaller size, driver peak RSS flat (within 1.2x),
nothing above 8 GB.

The mixture writer holds one input and one output row group in the driver (about 1M tokens each,
tokenize/shards.py ROW_GROUP_TOKENS), whatever the documents_per_shard of the tokenizer and mixture recipes
(--token-shard-docs, --mixture-shard-docs: the shipped 20,000 / 50,000 by default), so the bound is filled at
10k already. The tokenizer trains on a fixed 4 MB of text at every size. The mixture plan reads its
per-document hashes and lengths from local files in chunks of the mixture recipe's plan_memory_documents
(benchmarks/mixture_scale.py measures that step alone at larger sizes).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

GB = 2**30
COST_RATIO_TARGET, RSS_RATIO_TARGET, RSS_CAP = 1.2, 1.2, 8 * GB
SOURCES = {"bench_text": ("text/*.jsonl", "jsonl"), "bench_html": ("html/*.warc.gz", "warc.gz")}
WEIGHTS = {"bench_text": 0.8, "bench_html": 0.2}
SAMPLE_BYTES = 4 * 10**6  # tokenizer training sample
QUIET = {"spark.ui.showConsoleProgress": "false"}  # no progress bars in the printed table


class RssSampler:
    """Peak RSS of the driver, the driver JVM and the workers, sampled in a thread."""

    def __init__(self, interval_s: float = 0.2):
        self.interval, self.me = interval_s, psutil.Process()
        self.peaks = {"driver": 0, "driver_jvm": 0, "workers": 0}
        self.driver_start = self.me.memory_info().rss  # what earlier stages left resident in the driver
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _processes(self) -> list[psutil.Process]:
        tree = self.me.children(recursive=True)
        for p in psutil.process_iter(["cmdline"]):  # standalone cluster: executor JVMs are not our children
            if "org.apache.spark.executor.CoarseGrainedExecutorBackend" in (p.info["cmdline"] or []):
                tree += [p, *p.children(recursive=True)]
        return list({p.pid: p for p in tree}.values())

    def sample(self) -> None:
        now = {"driver": self.me.memory_info().rss, "driver_jvm": 0, "workers": 0}
        for p in self._processes():
            try:
                rss, cmd = p.memory_info().rss, " ".join(p.cmdline())
            except psutil.Error:  # ended between listing and reading
                continue
            now["driver_jvm" if "org.apache.spark.deploy.SparkSubmit" in cmd else "workers"] += rss
        for key, value in now.items():
            self.peaks[key] = max(self.peaks[key], value)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self):
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.sample()


@contextmanager
def stage(results: list, name: str, docs: int, mb: float):
    with RssSampler() as rss:
        start = time.perf_counter()
        yield
        wall = time.perf_counter() - start
    results.append({"stage": name, "docs": docs, "mb": mb, "wall_s": wall, "rss_driver_start": rss.driver_start,
                    **{f"rss_{k}": v for k, v in rss.peaks.items()}})
    print(f"  {name:<22} {wall:8.1f} s", file=sys.stderr, flush=True)


def write_recipes(folder: Path, corpus: Path) -> None:
    import yaml

    from marin_assets.core.recipes import PACKAGE_RECIPES

    shutil.copytree(PACKAGE_RECIPES, folder)  # the shipped cleaning, compliance, ... recipes; our sources
    sources = [{"name": name, "uri": str(corpus / pattern), "format": fmt, "license": "GPL-2.0-or-later",
                "provenance": {"origin": "Debian documentation installed by apt (benchmarks/make_bench_corpus.py)",
                               "version": "1"}}
               for name, (pattern, fmt) in SOURCES.items()]  # fmt: skip
    (folder / "sources.yaml").write_text(yaml.safe_dump({"allowed_roots": [str(corpus)], "sources": sources}))


def _text_mb(files: list[str]) -> float:
    """Uncompressed size of the text column, from the Parquet footers (no data read)."""
    import pyarrow.parquet as pq

    total = 0
    for uri in files:
        meta = pq.ParquetFile(uri.removeprefix("file://")).metadata
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            total += sum(group.column(c).total_uncompressed_size for c in range(group.num_columns)
                         if group.column(c).path_in_schema == "text")  # fmt: skip
    return total / 1e6


def _tokenize(spark, files, source, out, settings, per_shard):
    """tokenize_source as it is on this branch, or with a Spark session where the job takes one."""
    from marin_assets.tokenize.tokenize_job import tokenize_source

    params = inspect.signature(tokenize_source).parameters
    if "spark" in params:
        return tokenize_source(spark, files, source, out, settings, per_shard)
    return tokenize_source(files, source, out, settings, per_shard, os.cpu_count() or 1)


def text_sample(files: list[str], size: int) -> list[str]:
    """The first documents up to `size` bytes of text: a sample of fixed size (constant cost) at every corpus
    size. A fixed document count is not: the first 2,000 documents held 1.4 MB at 10k and 5.4 MB at 100k."""
    from marin_assets.tokenize.tokenize_job import iter_documents

    sample, total = [], 0
    for batch in iter_documents(files, 500, columns=("text",)):
        for text in batch["text"]:
            if total >= size:
                return sample
            sample.append(text)
            total += len(text.encode())
    return sample


def run_one(n_docs: int, master: str, corpus: Path, work: Path, token_shard_docs: int, mixture_shard_docs: int) -> dict:
    os.environ["MARIN_RECIPES_DIR"] = str(work / "recipes")
    write_recipes(work / "recipes", corpus)
    from marin_assets.core import layout
    from marin_assets.core.storage import Storage
    from marin_assets.data.clean.cleaning_job import clean_source
    from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
    from marin_assets.data.sources.source_registry import load_sources
    from marin_assets.resources.spark import SparkResource
    from marin_assets.tokenize.encoding import EncodeSettings
    from marin_assets.tokenize.mixture_build import build_mixture
    from marin_assets.tokenize.tokenize_recipe import MixtureRecipe, TokenizerSpec
    from marin_assets.tokenize.tokenize_job import cleaned_document_files, count_rows
    from marin_assets.tokenize.tokenizer_files import build_tokenizer

    manifest = json.loads((corpus / "manifest.json").read_text())
    recipe, storage, results = load_cleaning_recipe(), Storage(str(work / "root")), []
    specs = {s.name: s for s in load_sources().sources}
    with stage(results, "spark session", 0, 0):
        spark = SparkResource(master=master, conf=QUIET).get_session()
    for name, spec in specs.items():
        container = name.removeprefix("bench_")
        shards = [s for s in manifest["shards"] if s["path"].startswith(container + "/")]
        docs, mb = sum(s["docs"] for s in shards), sum(s["text_bytes"] for s in shards) / 1e6
        with stage(results, f"clean {container}", docs, mb), storage.atomic_dir(layout.CLEANED, name) as staged:
            stats = clean_source(spark, spec, recipe, staged.path)
            staged.write_json(stats, "stats.json")
        assert stats["conserved"], stats
        results[-1]["kept"] = stats["kept"]
    files = {name: cleaned_document_files(storage, name) for name in specs}
    sample = text_sample(files["bench_text"], SAMPLE_BYTES)
    tok_dir = str(work / "tokenizer")
    with stage(results, f"tokenizer ({SAMPLE_BYTES // 10**6} MB)", len(sample), sum(map(len, sample)) / 1e6):
        summary = build_tokenizer(TokenizerSpec(name="bench", vocab_size=8192), sample, tok_dir)
    settings = EncodeSettings(tok_dir, summary.hash, True, True, 1_000)
    for name in specs:
        with stage(results, f"tokenize {name.removeprefix('bench_')}", count_rows(files[name]), _text_mb(files[name])), \
                storage.atomic_dir(layout.TOKENIZED, name) as staged:  # fmt: skip
            stats = _tokenize(spark, files[name], name, staged.path, settings, token_shard_docs)
            staged.write_json(stats, "stats.json")
    mixture = MixtureRecipe(weights=WEIGHTS, epochs=1.0, seq_len=1024, documents_per_shard=mixture_shard_docs)
    with storage.atomic_dir(layout.MIXTURES, "bench") as staged:
        with stage(results, "mixture", sum(count_rows(f) for f in files.values()), 0):
            info, _ = build_mixture(storage, "bench", mixture, summary, tok_dir, list(specs), staged)
    results[-1]["mb"] = 4 * (info["train_tokens"] + info["validation_tokens"]) / 1e6  # int32 token bytes
    spark.stop()
    return {"docs": n_docs, "master": master, "text_mb": manifest["text_bytes"] / 1e6, "stages": results}


def ensure_corpus(n_docs: int, root: str) -> Path:
    corpus = Path(f"{root}-{n_docs}")
    manifest = corpus / "manifest.json"
    if not manifest.exists() or json.loads(manifest.read_text())["docs"] != n_docs:
        import make_bench_corpus

        make_bench_corpus.ensure_packages()
        make_bench_corpus.build(n_docs, corpus)
    return corpus


def print_table(runs: list[dict]) -> None:
    print(f"{'docs':>9} {'stage':<22} {'wall s':>8} {'docs/s':>9} {'MB/s':>7} {'drv start':>10} {'driver MB':>10} "
          f"{'drv JVM MB':>10} {'workers MB':>10}")  # fmt: skip
    for run in runs:
        for s in run["stages"]:
            rate = lambda x: f"{x / s['wall_s']:,.2f}" if x and s["wall_s"] else "-"  # noqa: E731
            print(f"{run['docs']:>9,} {s['stage']:<22} {s['wall_s']:>8.1f} {rate(s['docs']):>9} {rate(s['mb']):>7} "
                  f"{s['rss_driver_start'] / 2**20:>10,.0f} {s['rss_driver'] / 2**20:>10,.0f} "
                  f"{s['rss_driver_jvm'] / 2**20:>10,.0f} "
                  f"{s['rss_workers'] / 2**20:>10,.0f}")  # fmt: skip
        total = sum(s["wall_s"] for s in run["stages"] if s["stage"] != "spark session")
        print(f"{run['docs']:>9,} {'total (no session)':<22} {total:>8.1f} {run['docs'] / total:>9,.1f} "
              f"{run['text_mb'] / total:>7.2f}   ({run['master']}, {run['text_mb']:.0f} MB of text)")  # fmt: skip
    summary(runs)


def _cost(run: dict) -> float:
    return sum(s["wall_s"] for s in run["stages"] if s["stage"] != "spark session") / run["docs"]


def _peak(run: dict, key: str) -> int:
    return max(s[key] for s in run["stages"])


def summary(runs: list[dict]) -> None:
    verdict = lambda ok: "MET" if ok else "NOT MET"  # noqa: E731
    for small, large in zip(runs, runs[1:]):
        cost = _cost(large) / _cost(small)
        rss = _peak(large, "rss_driver") / _peak(small, "rss_driver")
        print(f"{small['docs']:,} -> {large['docs']:,} docs: per-document cost ratio {cost:.2f}x "
              f"(target <= {COST_RATIO_TARGET}x: {verdict(cost <= COST_RATIO_TARGET)}); driver peak RSS ratio "
              f"{rss:.2f}x (target <= {RSS_RATIO_TARGET}x: {verdict(rss <= RSS_RATIO_TARGET)})")  # fmt: skip
    worst = max(max(_peak(r, k) for k in ("rss_driver", "rss_driver_jvm", "rss_workers")) for r in runs)
    print(f"largest peak RSS of any group: {worst / GB:.2f} GB (cap 8 GB: {verdict(worst <= RSS_CAP)})")
    print(f"cores: {os.cpu_count()}, load average now: {os.getloadavg()[0]:.1f} "
          "(a busy machine makes wall-clock figures noisy)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", default="10000", help="comma-separated sizes, e.g. 10000,100000,1000000")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--corpus-root", default="/tmp/marin_bench_corpus", help="corpus of size N: <root>-N")
    parser.add_argument("--token-shard-docs", type=int, default=20_000, help="tokenizer documents_per_shard")
    parser.add_argument("--mixture-shard-docs", type=int, default=50_000, help="mixture documents_per_shard")
    parser.add_argument("--keep", help="keep each size's outputs in <keep>-N (default: a temp folder, removed)")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: run one size, print JSON
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if args.one:
        with (contextlib.nullcontext(f"{args.keep}-{args.one}") if args.keep
              else tempfile.TemporaryDirectory(prefix="marin_scale_")) as work:  # fmt: skip
            if args.keep:  # a fresh folder: no earlier run's outputs
                shutil.rmtree(work, ignore_errors=True)
                os.makedirs(work)
            corpus = Path(f"{args.corpus_root}-{args.one}")
            print(json.dumps(run_one(args.one, args.master, corpus, Path(work), args.token_shard_docs,
                                     args.mixture_shard_docs)))
        return
    runs = []
    for n in (int(x) for x in args.docs.split(",")):
        ensure_corpus(n, args.corpus_root)
        print(f"{n:,} documents on {args.master} ...", file=sys.stderr, flush=True)
        cmd = [sys.executable, __file__, "--one", str(n), "--master", args.master, "--corpus-root", args.corpus_root,
               "--token-shard-docs", str(args.token_shard_docs), "--mixture-shard-docs", str(args.mixture_shard_docs),
               *(["--keep", args.keep] if args.keep else [])]
        done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print_table(runs)


if __name__ == "__main__":
    main()
