"""Benchmark: HTML (WARC) and plain-text throughput per cleaning stage on the real Debian corpus.

    .venv/bin/python benchmarks/real_corpus_throughput.py [--corpus /tmp/marin_bench_corpus] [--docs 10000]

Corpus: benchmarks/make_bench_corpus.py (built when missing). Per stage, in this process on one core,
over the pure modules the Spark job runs: read (the product's readers), extract (HTML), normalize,
language, each quality filter (found by iterating the recipe's FilterSettings fields, each run alone
on the documents that passed language), dedup keys (exact key + MinHash LSH bands) and write
(Arrow table + Parquet). Then the whole path: cleaning_job.clean_source on Spark (--master, default
local[2]) per source. MB are input bytes: raw HTML for the HTML source, text for plain text.
Targets (issue 17), whole path on 2 cores: >= 3 MB/s HTML, >= 5 MB/s plain text.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

TARGET_MB_S = {"html": 3.0, "text": 5.0}


def _row(container: str, name: str, docs: int, nbytes: int, wall: float, dropped: int | str = "") -> None:
    print(f"{container:<5} {name:<34} {docs:>8,} {nbytes / 1e6:>8.1f} {wall:>8.2f} {docs / wall:>9,.0f} "
          f"{nbytes / 1e6 / wall:>7.2f} {dropped!s:>8}")  # fmt: skip


def timed(fn, items):
    start = time.perf_counter()
    out = [fn(x) for x in items]
    return out, time.perf_counter() - start


def per_stage(spec, files: list[str], container: str, recipe) -> None:
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from marin_assets.core.schemas import DOCUMENT_SCHEMA
    from marin_assets.data.dedup import MinHasher, band_key_matrix, exact_key
    from marin_assets.data.extract import html_to_text
    from marin_assets.data.filters.pipeline import FilterSettings, run_filters
    from marin_assets.data.language import identify_language, language_rejection
    from marin_assets.data.normalize import normalize_text
    from marin_assets.data.readers import RawRecord, read_file

    start = time.perf_counter()
    records = [r for path in files for r in read_file(path, spec, recipe.max_record_bytes) if isinstance(r, RawRecord)]
    raw_bytes = sum(len(r.content.encode()) for r in records)
    _row(container, "read", len(records), raw_bytes, time.perf_counter() - start)
    texts = [r.content for r in records]
    if container == "html":
        texts, wall = timed(html_to_text, texts)
        _row(container, "extract", len(records), raw_bytes, wall)
    size = lambda ts: sum(len(t.encode()) for t in ts)  # noqa: E731
    texts, wall = timed(lambda t: normalize_text(t, recipe.normalize.form), texts)
    _row(container, "normalize", len(texts), size(texts), wall)
    lang = recipe.language
    identify_language("warm up: load the model before timing")
    verdicts, wall = timed(lambda t: language_rejection(*identify_language(t, lang.max_chars), lang.allowlist,
                                                        lang.min_score), texts)  # fmt: skip
    passed = [t for t, v in zip(texts, verdicts, strict=True) if v is None and t]
    _row(container, "language", len(texts), size(texts), wall, len(texts) - len(passed))
    off = {name: None for name in FilterSettings.model_fields}
    kept = passed
    for name in FilterSettings.model_fields:  # the recipe's filters, each alone on the same documents
        alone = FilterSettings(**{**off, name: getattr(recipe.filters, name)})
        outcomes, wall = timed(lambda t: run_filters(t, alone), passed)  # noqa: B023
        _row(container, f"filter {name}", len(passed), size(passed), wall, sum(not o.kept for o in outcomes))
    outcomes = [run_filters(t, recipe.filters) for t in passed]
    kept = [o.text for o in outcomes if o.kept]
    dedup = recipe.dedup
    hasher = MinHasher(dedup.num_perm, dedup.shingle_size, dedup.seed)
    start = time.perf_counter()
    keys = [exact_key(t) for t in kept]
    signatures, _ = hasher.signatures(kept)
    band_key_matrix(signatures, dedup.bands, dedup.rows)
    _row(container, "dedup keys (exact + MinHash LSH)", len(kept), size(kept), time.perf_counter() - start,
         len(kept) - len(set(keys)))  # fmt: skip
    start = time.perf_counter()
    rows = {"id": [f"{i}" for i in range(len(kept))], "source": [spec.name] * len(kept), "url": [None] * len(kept),
            "text": kept, "metadata": [json.dumps({})] * len(kept), "raw_length": [len(t) for t in kept]}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        pq.write_table(pa.Table.from_pydict(rows, schema=DOCUMENT_SCHEMA), f"{tmp}/part.parquet", compression="zstd")
    _row(container, "write (Arrow + Parquet zstd)", len(kept), size(kept), time.perf_counter() - start)


def whole_path(spark, spec, recipe, container: str, raw_bytes: int, docs: int) -> tuple[float, bool]:
    from marin_assets.data.cleaning_job import clean_source

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        stats = clean_source(spark, spec, recipe, f"{tmp}/out")
        wall = time.perf_counter() - start
    _row(container, "WHOLE PATH: Spark clean_source", docs, raw_bytes, wall, stats["rejected"])
    return raw_bytes / 1e6 / wall, stats["conserved"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="/tmp/marin_bench_corpus")
    parser.add_argument("--docs", type=int, default=10_000, help="size to build when the corpus is missing")
    parser.add_argument("--master", default="local[2]")
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
    from marin_assets.data.cleaning_recipe import load_cleaning_recipe
    from marin_assets.data.readers import list_source_files, read_file
    from marin_assets.data.sources import load_sources
    from marin_assets.resources.spark import SparkResource

    recipe = load_cleaning_recipe()
    print(f"corpus {corpus}; per stage: one core, in process; whole path: Spark {args.master}; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"{'kind':<5} {'stage':<34} {'docs':>8} {'MB':>8} {'wall s':>8} {'docs/s':>9} {'MB/s':>7} {'dropped':>8}")
    spark = SparkResource(master=args.master, conf=QUIET).get_session()
    verdicts = []
    for spec in load_sources().sources:
        container = spec.name.removeprefix("bench_")
        files = list_source_files(spec)
        per_stage(spec, files, container, recipe)
        records = [r for path in files for r in read_file(path, spec, recipe.max_record_bytes)]
        raw = sum(len(r.content.encode()) for r in records if hasattr(r, "content"))
        rate, conserved = whole_path(spark, spec, recipe, container, raw, len(records))
        verdicts.append((container, rate, conserved))
    spark.stop()
    for container, rate, conserved in verdicts:
        target = TARGET_MB_S[container]
        print(f"{container}: whole path {rate:.2f} MB/s on {args.master}, target >= {target} MB/s: "
              f"{'MET' if rate >= target else 'NOT MET'}; counts conserved: {conserved}")  # fmt: skip
    load = os.getloadavg()[0]
    if load > 0.5 * (os.cpu_count() or 1):
        print(f"warning: load average {load:.1f} is above 0.5 per core: figures are from a busy machine")


if __name__ == "__main__":
    main()
