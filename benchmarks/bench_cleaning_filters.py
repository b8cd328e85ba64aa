"""Cleaning filters against datatrove's FineWeb filters: per-filter decision agreement, then throughput.

Agreement (in process, no Spark): every document goes through each filter of ours and of datatrove on
the same input, the text our pipeline gives that filter: after our reflow (the shipped recipe's
setting), and for FineWeb after our C4 line removal. Our C4 runs without its max_removed_frac rule
(datatrove has none; how many documents that rule alone rejects is printed separately). Documents:
the benchmark corpus plus the sample sources' own documents (hard-wrapped license texts among them).
Per filter: agreement on keep/reject (target >= 99%), on the rule name, on C4's kept text, and the
disagreements grouped by (ours, datatrove) rule with a few examples each.

Throughput: Gopher repetition -> Gopher quality -> C4 (filter_no_terminal_punct=False) -> FineWeb,
reading JSONL and writing the kept documents, both sides configured alike (our reflow and
max_removed_frac off, since datatrove has neither). Ours: clean_source on Spark local[2] (language
id and dedup off, since datatrove runs neither here). Peer: datatrove LocalPipelineExecutor, tasks=2.

    .venv/bin/python benchmarks/bench_cleaning_filters.py [--docs 100000] [--workdir /tmp/bench_clean]
        [--agreement-only]
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agreement import measure_agreement, print_agreement, sample_documents  # noqa: E402
from corpus import build_corpus  # noqa: E402

from marin_assets.data.cleaning_job import clean_source  # noqa: E402
from marin_assets.data.cleaning_recipe import CleaningRecipe, DedupSettings, LanguageSettings, SparkSettings  # noqa: E402
from marin_assets.data.filters.c4 import C4Config  # noqa: E402
from marin_assets.data.filters.pipeline import FilterSettings  # noqa: E402
from marin_assets.data.sources import SourceSpec  # noqa: E402
from marin_assets.resources.spark import SparkResource  # noqa: E402

from datatrove.executor import LocalPipelineExecutor  # noqa: E402
from datatrove.pipeline.filters import (  # noqa: E402
    C4QualityFilter,
    FineWebQualityFilter,
    GopherQualityFilter,
    GopherRepetitionFilter,
)
from datatrove.pipeline.readers import JsonlReader  # noqa: E402
from datatrove.pipeline.writers import JsonlWriter  # noqa: E402


def run_ours(corpus: Path, warmup_corpus: Path, out: Path) -> tuple[float, set[str]]:
    spark = SparkResource(master="local[2]", conf={"spark.driver.memory": "4g"}).get_session()
    spark.sparkContext.setLogLevel("ERROR")
    spec = SourceSpec(name="bench", uri=f"{corpus}/*.jsonl", format="jsonl", license="CC0-1.0")
    recipe = CleaningRecipe(
        language=LanguageSettings(allowlist=[]),
        filters=FilterSettings(reflow=None, c4=C4Config(filter_no_terminal_punct=False, max_removed_frac=None)),
        dedup=DedupSettings(exact=False, near=False),
        spark=SparkSettings(partitions=8),
    )
    # Warm-up (not measured): JVM, Python workers and their imports; datatrove's imports are done too.
    warm = spec.model_copy(update={"uri": f"{warmup_corpus}/*.jsonl"})
    clean_source(spark, warm, recipe, str(out.parent / "warmup_out"))
    start = time.perf_counter()
    stats = clean_source(spark, spec, recipe, str(out))
    elapsed = time.perf_counter() - start
    assert stats["conserved"], stats
    return elapsed, set(pq.read_table(out / "documents", columns=["id"]).column("id").to_pylist())


def run_datatrove(corpus: Path, out: Path) -> tuple[float, set[str]]:

    executor = LocalPipelineExecutor(
        pipeline=[
            JsonlReader(str(corpus)),
            GopherRepetitionFilter(),
            GopherQualityFilter(),
            C4QualityFilter(filter_no_terminal_punct=False),
            FineWebQualityFilter(),
            JsonlWriter(str(out / "kept")),
        ],
        tasks=2,
        workers=2,
        logging_dir=str(out / "logs"),
    )
    start = time.perf_counter()
    executor.run()
    elapsed = time.perf_counter() - start
    kept = set()
    for path in (out / "kept").glob("*"):
        with gzip.open(path, "rt") if path.suffix == ".gz" else open(path) as f:
            kept.update(json.loads(line)["id"] for line in f)
    return elapsed, kept


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench_clean"))
    parser.add_argument("--agreement-only", action="store_true", help="skip the throughput runs")
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    docs = build_corpus(args.docs, args.workdir / "corpus")
    ids = [d["id"] for d in docs]
    mb = sum(len(d["text"].encode()) for d in docs) / 1e6
    print(f"corpus: {len(docs):,} documents, {mb:.0f} MB")
    samples = sample_documents()
    print(f"agreement: corpus + {len(samples)} sample-source documents, per filter on the same input")
    print_agreement(measure_agreement(docs + samples))
    if args.agreement_only:
        return

    build_corpus(200, args.workdir / "warmup", seed=1)
    ours_s, ours_kept = run_ours(args.workdir / "corpus", args.workdir / "warmup", args.workdir / "ours")
    peer_s, peer_kept = run_datatrove(args.workdir / "corpus", args.workdir / "datatrove")
    agree = sum((i in ours_kept) == (i in peer_kept) for i in ids) / len(ids)
    ours_rate, peer_rate = len(ids) / ours_s, len(ids) / peer_s
    print(f"ours (Spark local[2])        {ours_rate:10,.0f} docs/s  ({ours_s:.1f} s, kept {len(ours_kept):,})")
    print(f"datatrove (tasks=2)          {peer_rate:10,.0f} docs/s  ({peer_s:.1f} s, kept {len(peer_kept):,})")
    print(f"ratio ours/datatrove         {ours_rate / peer_rate:10.2f}x   (target >= 2x)")
    print(f"keep/reject decision agreement {agree:.4f}")


if __name__ == "__main__":
    main()
