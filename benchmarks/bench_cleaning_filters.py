"""Cleaning filters against datatrove's FineWeb filters: per-filter decision agreement, then throughput.

Agreement (in process, no Spark): every document goes through each filter of ours and of datatrove on
the same input, the text our pipeline gives that filter: after our reflow (the shipped recipe's
setting), and for FineWeb after our C4 line removal. Our C4 runs without its max_removed_frac rule
(datatrove has none; how many documents that rule alone rejects is printed separately). Documents:
the benchmark corpus plus the sample sources' own documents (hard-wrapped license texts among them).
Per filter: agreement on keep/reject (target >= 99%), on the rule name, on C4's kept text, and the
disagreements grouped by (ours, datatrove) rule with a few examples each.

Throughput, at equal cores (benchmarks/harness.py): Gopher repetition -> Gopher quality -> C4
(filter_no_terminal_punct=False) -> FineWeb, reading JSONL and writing the kept documents, both sides
configured alike (our reflow and max_removed_frac off, since datatrove has neither). Ours: clean_source
on Spark local[cores] (language id and dedup off, since datatrove runs neither here). Peer: datatrove
LocalPipelineExecutor, tasks = workers = cores. --repeat rounds each (median and range), the share of
documents both sides kept or both rejected (target >= 0.995) and the ratio of medians (target >= 10x).

    .venv/bin/python benchmarks/bench_cleaning_filters.py [--docs 100000] [--repeat 3] [--cores N]
        [--workdir /tmp/bench_clean] [--agreement-docs 5000] [--agreement-only]
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
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


TARGET_RATIO = 10
TARGET_IDENTICAL = 0.995


def recipe() -> CleaningRecipe:
    return CleaningRecipe(
        language=LanguageSettings(allowlist=[]),
        filters=FilterSettings(reflow=None, c4=C4Config(filter_no_terminal_punct=False, max_removed_frac=None)),
        dedup=DedupSettings(exact=False, near=False),
        spark=SparkSettings(partitions=8),
    )


def ours_runner(corpus: Path, warmup_corpus: Path, workdir: Path, cores: int):
    """A function that cleans the corpus once on Spark local[cores] and returns the kept ids (session warmed)."""
    conf = {"spark.driver.memory": "4g", "spark.ui.showConsoleProgress": "false"}
    spark = SparkResource(master=f"local[{cores}]", conf=conf).get_session()
    spark.sparkContext.setLogLevel("ERROR")
    spec = SourceSpec(name="bench", uri=f"{corpus}/*.jsonl", format="jsonl", license="CC0-1.0")
    # Warm-up (not measured): JVM, Python workers and their imports.
    clean_source(spark, spec.model_copy(update={"uri": f"{warmup_corpus}/*.jsonl"}), recipe(), str(workdir / "warmup"))
    rounds = iter(range(1_000))

    def run() -> set[str]:
        out = workdir / f"ours-{next(rounds)}"
        stats = clean_source(spark, spec, recipe(), str(out))
        assert stats["conserved"], stats
        kept = set(pq.read_table(out / "documents", columns=["id"]).column("id").to_pylist())
        shutil.rmtree(out, ignore_errors=True)
        return kept

    return run


def datatrove_runner(corpus: Path, workdir: Path, cores: int):
    rounds = iter(range(1_000))

    def run() -> set[str]:
        out = workdir / f"datatrove-{next(rounds)}"  # a fresh logging dir: datatrove skips completed tasks
        LocalPipelineExecutor(
            pipeline=[
                JsonlReader(str(corpus)),
                GopherRepetitionFilter(),
                GopherQualityFilter(),
                C4QualityFilter(filter_no_terminal_punct=False),
                FineWebQualityFilter(),
                JsonlWriter(str(out / "kept")),
            ],
            tasks=cores,
            workers=cores,
            logging_dir=str(out / "logs"),
        ).run()
        kept = set()
        for path in (out / "kept").glob("*"):
            with gzip.open(path, "rt") if path.suffix == ".gz" else open(path) as f:
                kept.update(json.loads(line)["id"] for line in f)
        shutil.rmtree(out, ignore_errors=True)
        return kept

    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=harness.MIN_REPEATS, help="timed rounds per side")
    parser.add_argument("--cores", type=int, default=harness.machine_cores(), help="cores given to each side")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench_clean"))
    parser.add_argument("--agreement-docs", type=int, default=5_000,
                        help="corpus documents in the per-filter agreement")  # fmt: skip
    parser.add_argument("--agreement-only", action="store_true", help="skip the throughput runs")
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    docs = build_corpus(args.docs, args.workdir / "corpus")
    ids = [d["id"] for d in docs]
    mb = sum(len(d["text"].encode()) for d in docs) / 1e6
    print(f"corpus: {len(docs):,} documents, {mb:.0f} MB")
    samples = sample_documents()
    agreement_docs = docs[: args.agreement_docs]
    print(f"agreement: {len(agreement_docs):,} corpus + {len(samples)} sample-source documents, per filter on the "
          "same input")  # fmt: skip
    print_agreement(measure_agreement(agreement_docs + samples))
    if args.agreement_only:
        return

    build_corpus(200, args.workdir / "warmup", seed=1)
    ours = harness.Side(f"marin (Spark local[{args.cores}])", cores=args.cores)
    peer = harness.Side(f"datatrove (tasks={args.cores})", cores=args.cores)
    run_ours = ours_runner(args.workdir / "corpus", args.workdir / "warmup", args.workdir, args.cores)
    run_peer = datatrove_runner(args.workdir / "corpus", args.workdir, args.cores)
    for _ in range(args.repeat):
        ours.time(run_ours, units=len(ids))
        peer.time(run_peer, units=len(ids))
    print(f"kept: ours {len(ours.last):,}, datatrove {len(peer.last):,} of {len(ids):,}")
    identical = sum((i in ours.last) == (i in peer.last) for i in ids) / len(ids)
    met = "met" if identical >= TARGET_IDENTICAL else "NOT met"
    print(f"identical keep/reject decisions: {identical:.4f}  (target >= {TARGET_IDENTICAL}: {met})")
    harness.report(f"cleaning filters, {len(ids):,} documents", ours, peer, unit="docs/s", target=TARGET_RATIO)


if __name__ == "__main__":
    main()
