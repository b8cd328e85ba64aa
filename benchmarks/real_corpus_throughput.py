"""Benchmark: HTML (WARC) and plain-text throughput per cleaning stage on the real Debian corpus.

    .venv/bin/python benchmarks/real_corpus_throughput.py [--corpus /tmp/marin_bench_corpus] [--docs 10000]

Corpus: benchmarks/make_bench_corpus.py (built when missing). Shipped cleaning recipe; curation inputs as
the product makes them (the shipped eval sets' n-gram index; a quality model trained on the shipped
sample sources). Per stage, in this process on one core: what RecordCleaner.clean runs, in its order,
built from the cleaner's own objects (benchmarks/cleaning_stages.py): read (the product's readers),
extract (HTML, the source's extractor with its time limit), normalize, language, the filters (and
each filter alone on the same documents: rows in brackets, not in the total), each curation step the
recipe switches on, dedup keys (exact key + MinHash LSH bands), write (Arrow table + Parquet). Share:
of the per-stage total. Then the whole path: cleaning_job.clean_source on Spark (--master, default
local[2]) per source, with the same curation inputs. MB are each stage's input bytes (raw HTML for
read and extract).
The whole path runs --repeat times (default 3) per container, each round on a new Spark session (new
Python workers, so the filters' per-process chunk memo starts empty, as in a new run; the JVM stays): each
round is printed, then the median and range; the verdict uses the median. --no-stages skips the one-core table.
Before the whole path: the share of records (and bytes) that repeat an earlier record's content byte for
byte, which the whole path cleans once (data/outcome_memo.py); the per-stage table cleans every record.
Targets (issue 17), whole path on 2 cores: >= 3 MB/s HTML, >= 5 MB/s plain text.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

TARGET_MB_S = {"html": 3.0, "text": 5.0}


def _row(container: str, t, total: float) -> None:
    share = f"({t.wall / total:6.1%})" if t.alone else f"{t.wall / total:8.1%}"
    print(f"{container:<5} {t.name:<34} {t.docs:>8,} {t.nbytes / 1e6:>8.1f} {t.wall:>8.2f} "
          f"{t.docs / max(t.wall, 1e-9):>9,.0f} {t.nbytes / 1e6 / max(t.wall, 1e-9):>7.2f} {share:>8} {t.dropped:>8}")  # fmt: skip


HEADER = (f"{'kind':<5} {'stage':<34} {'docs':>8} {'MB':>8} {'wall s':>8} {'docs/s':>9} {'MB/s':>7} {'share':>8} "
          f"{'dropped':>8}")  # fmt: skip


def print_stages(container: str, timings: list) -> None:
    """The cleaner's stages one at a time (cleaning_stages); share = of the stages' total (alone rows: not in it)."""
    total = sum(t.wall for t in timings if not t.alone)
    for t in timings:
        _row(container, t, total)
    print(f"{container:<5} {'per-stage total (one core)':<34} {timings[0].docs:>8,} {timings[0].nbytes / 1e6:>8.1f} "
          f"{total:>8.2f} {timings[0].docs / total:>9,.0f} {timings[0].nbytes / 1e6 / total:>7.2f}")  # fmt: skip


def print_copies(container: str, records: list, raw_bytes: int) -> None:
    """How much of the corpus repeats another record's content byte for byte: the whole path cleans each
    content once per task (outcome_memo), so its rate depends on this share."""
    from marin_assets.data.clean.outcome_memo import content_key

    seen, copies, copy_bytes = set(), 0, 0
    for r in records:
        if not hasattr(r, "content"):
            continue
        key = content_key({"kind": "record", "content": r.content, "content_type": r.content_type})
        if key in seen:
            copies, copy_bytes = copies + 1, copy_bytes + len(r.content.encode())
        seen.add(key)
    print(f"{container:<5} byte-identical copies of an earlier record: {copies:,} of {len(records):,} records, "
          f"{copy_bytes / max(raw_bytes, 1):.1%} of the bytes (the whole path cleans each content once)")  # fmt: skip


def whole_path(sessions, spec, recipe, container: str, raw_bytes: int, docs: int, eval_index, model,
               repeat: int) -> tuple[float, bool]:  # fmt: skip
    """clean_source `repeat` times, each in `with sessions() as spark` (the benchmark: a new session a round):
    a row per round, then the median (range); returns (median MB/s, counts conserved)."""
    from cleaning_stages import StageTime

    from marin_assets.data.clean.cleaning_job import clean_source

    walls, conserved = [], True
    for round_ in range(1, repeat + 1):
        with tempfile.TemporaryDirectory() as tmp, sessions() as spark:
            start = time.perf_counter()
            stats = clean_source(spark, spec, recipe, f"{tmp}/out", eval_index, model)
            walls.append(time.perf_counter() - start)
        conserved = conserved and stats["conserved"]
        name = f"WHOLE PATH: Spark, round {round_}"
        _row(container, StageTime(name, docs, raw_bytes, walls[-1], stats["rejected"]), walls[-1])
    wall = statistics.median(walls)
    rates = sorted(raw_bytes / 1e6 / w for w in walls)
    print(f"{container:<5} {'WHOLE PATH: median of ' + str(repeat):<34} {docs:>8,} {raw_bytes / 1e6:>8.1f} {wall:>8.2f} "
          f"{docs / wall:>9,.0f} {raw_bytes / 1e6 / wall:>7.2f}  range {rates[0]:.2f}-{rates[-1]:.2f} MB/s")  # fmt: skip
    return raw_bytes / 1e6 / wall, conserved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="/tmp/marin_bench_corpus")
    parser.add_argument("--docs", type=int, default=10_000, help="size to build when the corpus is missing")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=3, help="whole-path rounds per container (median, range)")
    parser.add_argument("--no-stages", action="store_true", help="skip the one-core per-stage table")
    parser.add_argument("--only", choices=sorted(TARGET_MB_S), help="measure this container alone")
    args = parser.parse_args()
    corpus = Path(args.corpus)
    if not (corpus / "manifest.json").exists():
        import make_bench_corpus

        make_bench_corpus.ensure_packages()
        make_bench_corpus.build(args.docs, corpus)
    work = tempfile.mkdtemp(prefix="marin_throughput_")
    from scale_data_path import QUIET, write_recipes

    os.environ["MARIN_RECIPES_DIR"] = f"{work}/recipes"
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    write_recipes(Path(work) / "recipes", corpus)
    from cleaning_stages import curation_for, run_stages, shipped_eval_index, shipped_quality_model

    from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
    from marin_assets.data.formats.readers import list_source_files, read_file
    from marin_assets.data.sources.source_registry import load_sources
    from marin_assets.resources.spark import SparkResource

    recipe = load_cleaning_recipe()
    print(f"corpus {corpus}; per stage: one core, in process; whole path: Spark {args.master}; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(HEADER)
    @contextmanager
    def new_session():
        spark = SparkResource(master=args.master, conf=QUIET).get_session()
        try:
            yield spark
        finally:
            spark.stop()

    eval_index, model = shipped_eval_index(recipe), shipped_quality_model(recipe)
    verdicts = []
    for spec in load_sources().sources:
        container = spec.name.removeprefix("bench_")
        if args.only and container != args.only:
            continue
        files = list_source_files(spec)
        curation = curation_for(recipe, spec.name, eval_index, model)
        if not args.no_stages:
            print_stages(container, run_stages(spec, files, recipe, curation)[1])
        records = [r for path in files for r in read_file(path, spec, recipe.max_record_bytes)]
        raw = sum(len(r.content.encode()) for r in records if hasattr(r, "content"))
        print_copies(container, records, raw)
        rate, conserved = whole_path(new_session, spec, recipe, container, raw, len(records), eval_index, model,
                                     args.repeat)  # fmt: skip
        verdicts.append((container, rate, conserved))
    for container, rate, conserved in verdicts:
        target = TARGET_MB_S[container]
        print(f"{container}: whole path {rate:.2f} MB/s (median of {args.repeat}) on {args.master}, target >= {target} MB/s: "
              f"{'MET' if rate >= target else 'NOT MET'}; counts conserved: {conserved}")  # fmt: skip
    load = os.getloadavg()[0]
    if load > 0.5 * (os.cpu_count() or 1):
        print(f"warning: load average {load:.1f} is above 0.5 per core: figures are from a busy machine")


if __name__ == "__main__":
    main()
