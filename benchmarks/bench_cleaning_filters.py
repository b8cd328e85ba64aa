"""Cleaning filters against datatrove's FineWeb filters: per-filter decision agreement, then throughput.

Agreement (in process, no Spark): every document goes through each filter of ours and of datatrove on
the same input, the text our pipeline gives that filter: after our reflow (the shipped recipe's
setting), and for FineWeb after our C4 line removal. Our C4 runs without its max_removed_frac rule
(datatrove has none; how many documents that rule alone rejects is printed separately). Documents:
the benchmark corpus plus the sample sources' own documents (hard-wrapped license texts among them).
Per filter: agreement on keep/reject (target >= 99%), on the rule name, on C4's kept text, and the
disagreements grouped by (ours, datatrove) rule with a few examples each.

Corpus: the peer-like Debian corpus (benchmarks/peer_corpus.py; --corpus generated: benchmarks/corpus.py,
a best case for any memo, labelled so). Its distinct-chunk share, mean size and recombined share are printed.

Throughput, at equal cores (benchmarks/harness.py), rounds alternating ours / datatrove, load before each: Gopher repetition -> Gopher quality -> C4
(filter_no_terminal_punct=False) -> FineWeb, reading JSONL and writing the kept documents, both sides
configured alike (our reflow and max_removed_frac off, since datatrove has neither). Ours: clean_source
on Spark local[cores] (language id and dedup off, since datatrove runs neither here). Peer: datatrove
LocalPipelineExecutor, tasks = workers = cores. Cold start apart: ours opens a new Spark session and runs a
warm-up job before each round (timed as its cold start; fresh Python workers, so no memo carries over);
datatrove starts its pool inside every round (its start on 200 documents is printed). --repeat rounds each
(median and range), the rate counting one cold start too, the share of
documents both sides kept or both rejected (target >= 0.999) and the ratio of medians (target >= 8x at 10k, >= 12x at 100k).

    .venv/bin/python benchmarks/bench_cleaning_filters.py [--docs 100000] [--repeat 3] [--cores N]
        [--workdir /tmp/bench_clean] [--agreement-docs 5000 | 0] [--agreement-only] [--corpus peer|generated]
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import sys
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
import peer_corpus  # noqa: E402
from agreement import measure_agreement, print_agreement, sample_documents  # noqa: E402
from corpus import build_corpus  # noqa: E402

from marin_assets.data.clean.cleaning_job import clean_source  # noqa: E402
from marin_assets.data.clean.cleaning_recipe import CleaningRecipe, DedupSettings, LanguageSettings, SparkSettings  # noqa: E402
from marin_assets.data.clean.filters.c4 import C4Config  # noqa: E402
from marin_assets.data.clean.filters.pipeline import FilterSettings  # noqa: E402
from marin_assets.data.sources.source_registry import SourceSpec  # noqa: E402
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


TARGET_RATIO = {10_000: 8, 100_000: 12}  # issue 54: >= 8x at 10k documents, >= 12x at 100k
TARGET_IDENTICAL = 0.999


def recipe() -> CleaningRecipe:
    return CleaningRecipe(
        language=LanguageSettings(allowlist=[]),
        filters=FilterSettings(reflow=None, c4=C4Config(filter_no_terminal_punct=False, max_removed_frac=None)),
        dedup=DedupSettings(exact=False, near=False),
        spark=SparkSettings(partitions=8),
    )


def ours_runner(corpus: Path, warmup_corpus: Path, workdir: Path, cores: int):
    """A function that cleans the corpus once on Spark local[cores] and returns the kept ids. Each round
    starts its own session and runs a warm-up job on another small corpus (the JVM, the Python workers and
    their imports): timed as the side's cold start. A fresh session per round also means fresh Python
    workers, so no round reuses a word memo filled by the round before on these very documents."""
    conf = {"spark.driver.memory": "4g", "spark.ui.showConsoleProgress": "false"}
    spec = SourceSpec(name="bench", uri=f"{corpus}/*.jsonl", format="jsonl", license="CC0-1.0")
    rounds = iter(range(1_000))

    def start():
        spark = SparkResource(master=f"local[{cores}]", conf=conf).get_session()
        spark.sparkContext.setLogLevel("ERROR")
        clean_source(spark, spec.model_copy(update={"uri": f"{warmup_corpus}/*.jsonl"}), recipe(),
                     str(workdir / f"warmup-{next(rounds)}"))  # fmt: skip
        return spark

    def run() -> set[str]:
        spark = state.pop()
        out = workdir / f"ours-{next(rounds)}"
        try:
            stats = clean_source(spark, spec, recipe(), str(out))
        finally:
            spark.stop()
        assert stats["conserved"], stats
        kept = set(pq.read_table(out / "documents", columns=["id"]).column("id").to_pylist())
        shutil.rmtree(out, ignore_errors=True)
        return kept

    state: list = []  # the session `start` opened, for the next `run`
    return start, run, state


def datatrove_runner(corpus: Path, workdir: Path, cores: int, prefix: str = "datatrove"):
    rounds = iter(range(1_000))

    def run() -> set[str]:
        out = workdir / f"{prefix}-{next(rounds)}"  # a fresh logging dir: datatrove skips completed tasks
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
    parser.add_argument("--corpus", choices=("peer", "generated"), default="peer",
                        help="peer: the peer-like Debian corpus (benchmarks/peer_corpus.py); generated: "
                             "benchmarks/corpus.py, a best case for any memo")  # fmt: skip
    parser.add_argument("--repeat", type=int, default=harness.MIN_REPEATS, help="timed rounds per side")
    parser.add_argument("--cores", type=int, default=harness.machine_cores(), help="cores given to each side")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench_clean"))
    parser.add_argument("--agreement-docs", type=int, default=5_000,
                        help="corpus documents in the per-filter agreement")  # fmt: skip
    parser.add_argument("--agreement-only", action="store_true", help="skip the throughput runs")
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    if args.corpus == "peer":
        docs = peer_corpus.write_docs(peer_corpus.load_or_build(args.docs), args.workdir / "corpus")
        label = "peer-like Debian corpus"
    else:
        docs = build_corpus(args.docs, args.workdir / "corpus")
        label = "generated from sample paragraphs: BEST CASE for any memo, not the realistic figure"
    ids = [d["id"] for d in docs]
    print(peer_corpus.describe(peer_corpus.corpus_stats(docs), label))
    samples = sample_documents()
    agreement_docs = docs[: args.agreement_docs]
    if agreement_docs:
        print(f"agreement: {len(agreement_docs):,} corpus + {len(samples)} sample-source documents, per filter on "
              "the same input")  # fmt: skip
        print_agreement(measure_agreement(agreement_docs + samples))
    if args.agreement_only:
        return

    build_corpus(200, args.workdir / "warmup", seed=1)
    ours = harness.Side(f"marin (Spark local[{args.cores}])", cores=args.cores)
    peer = harness.Side(f"datatrove (tasks={args.cores})", cores=args.cores)
    start_ours, run_ours, session = ours_runner(args.workdir / "corpus", args.workdir / "warmup", args.workdir,
                                                args.cores)  # fmt: skip
    run_peer = datatrove_runner(args.workdir / "corpus", args.workdir, args.cores)
    warm_peer = datatrove_runner(args.workdir / "warmup", args.workdir, args.cores, "datatrove-warmup")
    # datatrove starts its process pool inside every run, so its rounds already include that cost; what it
    # is, measured on the 200-document warm-up corpus (pool start, imports, a few documents):
    seconds = statistics.median(harness.timed(warm_peer)[0] for _ in range(2))
    print(f"datatrove cold start (a run on 200 documents, also inside each of its rounds): {seconds:.1f} s")
    for _ in range(args.repeat):  # alternating: ours (session + warm-up timed apart), then the peer
        session.append(ours.time_cold(start_ours))
        ours.time(run_ours, units=len(ids))
        peer.time(run_peer, units=len(ids))
    print(f"kept: ours {len(ours.last):,}, datatrove {len(peer.last):,} of {len(ids):,}")
    identical = sum((i in ours.last) == (i in peer.last) for i in ids) / len(ids)
    met = "met" if identical >= TARGET_IDENTICAL else "NOT met"
    print(f"identical keep/reject decisions: {identical:.4f}  (target >= {TARGET_IDENTICAL}: {met})")
    harness.report(f"cleaning filters, {len(ids):,} documents ({args.corpus} corpus)", ours, peer, unit="docs/s",
                   target=TARGET_RATIO[100_000 if len(ids) >= 100_000 else 10_000], units=len(ids))  # fmt: skip


if __name__ == "__main__":
    main()
