"""Near dedup at equal cores: our Spark job path vs datasketch MinHashLSH over a process pool.

Issue 54: the default corpus is the peer-like Debian corpus (peer_corpus.py; its distinct-chunk share, mean
size and recombined share are printed); our side removes only verified candidate pairs (exact Jaccard of
the same shingles >= --threshold, the cleaning job's default; --unverified: raw LSH), datasketch does not
verify; each Spark round counts the warm-up job that restarts its Python workers (printed apart too), and
the session and pool starts are printed as cold starts. Quality: precision of the removed pairs (removed
document, document kept in its place) against exact Jaccard and recall on the planted near duplicates,
both sides. What follows describes the rule and the older corpora, still available with --corpora.

Word 5-grams of the lower-cased text, 112 permutations, 14 bands x 8 rows, seed 1, on the same
documents, with the same output work on every side: the set of removed ids (candidate pairs, i.e.
documents sharing a band, clustered with union-find; all but the smallest id of a cluster removed).

Main figure, N cores each (--cores, default: the machine's): ours is the Spark job's path (what the
cleaning job runs: Spark local[N] reads the JSONL files, mapInArrow band keys, near_duplicates builds
the components in Spark; the removed ids are collected here only to compare); the peer computes
datasketch MinHash signatures over shards in a ProcessPoolExecutor of N processes (the parallel
part), then MinHashLSH insert + query and the union-find rule in the parent; each first runs one round
that is printed, not measured (the JVM's JIT warm-up). Both parallel sides are timed with warm workers:
the pool's processes are started (and import datasketch) once, before any round; Spark's Python
workers exit after a minute idle (Spark's PythonWorkerFactory), which the other sides' rounds exceed,
so a small Spark job on 2% of the documents, not measured, starts them again (their imports and
compiled SHA-1 kernels; `import jax` alone is 1.5-2.3 s) before each Spark round (--cold-spark-workers
skips it: each Spark round then also pays its workers' start, a fixed cost a long job amortises). Secondary, one core
each: ours in process (MinHasher + band keys + lsh_star_edges) vs datasketch in one process. Both
printed with benchmarks/harness.py (median and range of --repeat rounds, cores, load average).

Decisions. Ours uses the recipe's MinHash hash family (--hash-family; default the recipe's, `datasketch`;
`polynomial`: numpy hashes, fast). `datasketch` gives signatures bit-identical to datasketch's MinHash (SHA-1 per
shingle, MurmurHash3 finalizer, affine permutations mod 2**32 from RandomState(seed);
data/hash_families/datasketch_sha1.py), so its candidate pairs agree exactly; any other family splits
borderline pairs differently. The pair agreement is printed (target >= 0.95), with its reference:
datasketch against itself at another seed, what two independent hash functions agree on for that corpus.
Checked exactly: our LSH + clustering on datasketch's own signatures flags what datasketch flags; the
Spark path removes what ours in process removes; the pool removes what one datasketch process removes.
Precision / recall of the candidate pairs against exact Jaccard (>= --threshold) on --quality-docs
documents per corpus.

Corpora, each with its own table and ratio: the project's (benchmarks/corpus.py: sample-source
paragraphs, 10% exact + 10% near duplicates) and one built like the peer corpus of the notes
(benchmarks/make_bench_corpus.py: Debian docs, same planted shares; its text/*.jsonl, first --docs).

    .venv/bin/python benchmarks/bench_near_dedup.py [--docs 30000] [--repeat 3] [--cores N]
        [--debian-corpus /tmp/marin_bench_corpus-100000 | --debian-corpus ''] [--quality-docs 4000]
        [--threshold 0.7] [--workdir /tmp/bench_dedup] [--corpora project debian] [--hash-family NAME]
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from corpus import build_corpus  # noqa: E402
from marin_assets.data.dedup.hash_families import family_names  # noqa: E402
import peer_corpus  # noqa: E402
from marin_assets.data.dedup.dedup_keys import cluster_representatives  # noqa: E402
from dedup_sides import (  # noqa: E402
    BANDS,
    HASH_FAMILY,
    NUM_PERM,
    ROWS,
    SHINGLE,
    DatasketchPool,
    bucket_pairs,
    check_same_rule,
    print_precision_recall,
    print_removal_quality,
    print_seed_reference,
    dedup_settings,
    print_verified_agreement,
    run_datasketch,
    run_ours,
)

TARGET_RATIO = 3
TARGET_AGREEMENT = 0.95
# the 100k build has ~80k text documents, so both corpora are measured at --docs (the 10k build: 8k)
DEBIAN_DEFAULT = next((p for p in ("/tmp/marin_bench_corpus-100000", "/tmp/marin_bench_corpus-10000")
                       if Path(p, "text").is_dir()), "/tmp/marin_bench_corpus-100000")  # fmt: skip


def read_jsonl(folder: Path) -> list[dict]:
    return [json.loads(line) for path in sorted(folder.glob("*.jsonl")) for line in open(path)]


def project_corpus(n_docs: int, workdir: Path) -> tuple[list[dict], set[str]]:
    docs = build_corpus(n_docs, workdir)
    return docs, {d["id"] for d in docs if not d["id"].startswith("doc-")}


def debian_corpus(source: Path, n_docs: int, workdir: Path, n_files: int = 8) -> tuple[list[dict], set[str]]:
    """The first n_docs plain-text documents of a make_bench_corpus.py build, rewritten as (id, text) shards
    for Spark; planted duplicates whose original is among them."""
    lines = (line for path in sorted((source / "text").glob("*.jsonl")) for line in open(path))
    docs = [{"id": d["id"], "text": d["text"]} for d in map(json.loads, itertools.islice(lines, n_docs))]
    if not docs:
        raise SystemExit(f"no documents under {source}/text: build it with benchmarks/make_bench_corpus.py")
    workdir.mkdir(parents=True, exist_ok=True)
    for i in range(n_files):
        with open(workdir / f"part-{i:03d}.jsonl", "w") as f:
            f.writelines(json.dumps(doc) + "\n" for doc in docs[i::n_files])
    ids = {d["id"] for d in docs}
    planted = [json.loads(line) for line in open(source / "planted_duplicates.jsonl")]
    return docs, {p["id"] for p in planted if p["id"] in ids and p["of"] in ids}


def spark_session(cores: int):
    from marin_assets.resources.spark import SparkResource

    from marin_assets.data.clean.cleaning_recipe import CleaningRecipe

    # The job's Python stage runs on recipe.spark.partitions partitions (it repartitions by id); reading
    # the files into at least that many splits gives the band-key stage the same parallelism, without a
    # shuffle of the texts (else 8 files of ~18 MB make 3 splits on 2 cores: one core idles a third).
    conf = {"spark.driver.memory": "4g", "spark.ui.showConsoleProgress": "false",
            "spark.sql.files.minPartitionNum": str(CleaningRecipe().spark.partitions)}  # fmt: skip
    spark = SparkResource(master=f"local[{cores}]", conf=conf).get_session()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def spark_runner(spark, corpus: Path, threshold: float | None):
    """(run, warm): run() runs the Spark job's dedup path on the corpus files and returns {removed id: id kept
    in its place}; with a threshold, candidate pairs are verified by exact Jaccard as the cleaning job does
    by default (dedup_precision.jaccard_edge_filter). warm() runs it on 2% of them, which starts a Python
    worker per core (imports, compiled kernels)."""
    from pyspark.sql import functions as F

    from marin_assets.data.clean.cleaning_job import near_duplicates
    from marin_assets.data.dedup.dedup_precision import jaccard_edge_filter
    from marin_assets.data.dedup.lsh_bands import BAND_COLUMNS, lsh_band_batches

    docs = spark.read.schema("id string, text string").json(str(corpus))

    def run(frame=docs) -> dict[str, str]:
        bands = frame.mapInArrow(lsh_band_batches(dedup_settings()), BAND_COLUMNS)
        if threshold is None:
            found = near_duplicates(bands).select("member", "rep")
        else:  # the cleaning job's nodes: (id, source) structs, the edge filter joins the texts
            source = F.lit("bench").alias("source")
            nodes = bands.select(F.struct("id", source).alias("doc"), "bands")
            verify = jaccard_edge_filter(frame.select("id", source, "text"), SHINGLE, threshold)
            found = near_duplicates(nodes, node="doc", edge_filter=verify).select("member.id", "rep.id")
        # the ids come back as Arrow columns (Spark's bulk path), not a Row object per id
        table = found.toArrow()
        return dict(zip(table.column(0).to_pylist(), table.column(1).to_pylist()))

    def warm() -> None:
        run(docs.sample(0.02, seed=0))

    return run, warm


def bench(name: str, docs: list[dict], planted: set[str], spark_runner, pool: DatasketchPool, args) -> float:
    n, cores = len(docs), args.cores
    print(f"\n#### corpus: {name}, {n:,} documents, {sum(len(d['text'].encode()) for d in docs) / 1e6:.1f} MB, "
          f"{len(planted):,} planted duplicates")  # fmt: skip
    spark_side = harness.Side(f"marin Spark local[{cores}]", cores=cores)
    pool_side = harness.Side(f"datasketch {cores} proc", cores=cores)
    ours_side, peer_side = harness.Side("marin in process", cores=1), harness.Side("datasketch 1 proc", cores=1)
    # One full round of each parallel side first, not measured: the Spark session's JVM compiles its hot
    # code (JSON parsing, Arrow, the bucket sort) during its first runs on the data (a fresh session ran
    # 12.2, 8.1, 7.2, 6.8 s on the project corpus, 2026-12-03), a one-time cost of a job that a long job
    # amortises; the medians below are the steady state. Both cold rounds are printed.
    run_spark, warm_spark = spark_runner
    warm_spark()  # the first round's cold cost is the JVM's, as before: its Python workers are started
    cold = {side.name: harness.timed(fn)[0] for side, fn in ((spark_side, run_spark), (pool_side, lambda: pool(docs)))}
    print("first round, not measured: " + ", ".join(f"{name} {seconds:.1f} s ({n / seconds:,.0f} docs/s)"
                                                    for name, seconds in cold.items()))  # fmt: skip
    spark_side.cold, pool_side.cold = [], []  # the session and pool starts are printed in main

    def spark_round():
        # counted in the round: the pool's processes live across rounds, Spark's idle Python workers exit
        # after 60 s, so a user's next job starts them again (its cold part is also printed apart)
        if not args.cold_spark_workers:
            spark_side.time_cold(warm_spark)
        return run_spark()

    threshold = None if args.unverified else args.threshold
    for _ in range(args.repeat):
        spark_side.time(spark_round, units=n)
        pool_side.time(lambda: pool(docs), units=n)
        ours_side.time(lambda: run_ours(docs, threshold), units=n)
        peer_side.time(lambda: run_datasketch(docs), units=n)
    (ours_removed, ids, band_key_rows), (peer_removed, peer_pairs, peer_signatures) = ours_side.last, peer_side.last
    spark_reps = spark_side.last
    spark_side.last = set(spark_reps)
    ours_pairs = bucket_pairs(ids, band_key_rows)
    print(f"our removal: {'raw LSH candidates (unverified)' if threshold is None else f'verified, exact Jaccard >= {threshold}'}"
          "; datasketch: raw LSH candidates (it does not verify)")
    print("removal quality against exact Jaccard of the same shingles (dedup_precision's):")
    of = {d["id"]: d["of"] for d in docs if d.get("origin") == "near_duplicate"}  # the peer-like corpus's
    print_removal_quality("ours (Spark path)", docs, spark_reps, args.threshold, planted, of)
    print_removal_quality("datasketch", docs, cluster_representatives(peer_pairs), args.threshold, planted, of)
    print(f"removed: ours {len(ours_removed):,}, datasketch {len(peer_removed):,}; candidate pairs: ours "
          f"{len(ours_pairs):,}, datasketch {len(peer_pairs):,}")  # fmt: skip
    differ = ours_removed ^ peer_removed
    print(f"removed documents: {len(differ)} of {n:,} decided differently (verification refuses candidates) (agreement {1 - len(differ) / n:.5f}); "
          f"Jaccard of removed sets {len(ours_removed & peer_removed) / max(1, len(ours_removed | peer_removed)):.5f}")  # fmt: skip
    agreement = len(ours_pairs & peer_pairs) / max(1, len(ours_pairs | peer_pairs))
    met = "met" if agreement >= TARGET_AGREEMENT else "NOT met"
    print(f"pair agreement (Jaccard of candidate-pair sets) {agreement:.4f}  (target >= {TARGET_AGREEMENT}: {met})")
    print_verified_agreement(docs, ours_pairs, peer_pairs, args.threshold)
    if args.seed_reference:
        print_seed_reference(docs, pool, peer_pairs, args.threshold)
    if planted and threshold is None:
        print(f"planted duplicates removed: ours {len(planted & ours_removed) / len(planted):.4f}, "
              f"datasketch {len(planted & peer_removed) / len(planted):.4f}")  # fmt: skip
    check_same_rule(peer_removed, peer_pairs, peer_signatures)
    same_spark, same_pool = spark_side.last == ours_removed, pool_side.last[0] == peer_removed
    print(f"Spark path removes the same documents as ours in process: {same_spark}; "
          f"datasketch pool the same as one datasketch process: {same_pool}")  # fmt: skip
    if not (same_spark and same_pool):
        raise SystemExit("a parallel path decided differently from its one-process counterpart")
    if args.quality_docs:
        quality = build_corpus(args.quality_docs, args.workdir / "quality", seed=1) if name == "project" else docs
        print_precision_recall(quality[: args.quality_docs], args.threshold)
    warm = statistics.median(spark_side.cold) if spark_side.cold else 0.0
    print(f"Spark rounds include the warm-up job that restarts its Python workers: median {warm:.1f} s a round")
    ratio = harness.report(f"near dedup, {name} corpus, Spark path at {cores} cores (warm-up included)", spark_side,
                           pool_side, unit="docs/s", target=TARGET_RATIO)  # fmt: skip
    harness.report(f"near dedup, {name} corpus, in process, one core each", ours_side, peer_side, unit="docs/s")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=30_000, help="documents per corpus")
    parser.add_argument("--repeat", type=int, default=harness.MIN_REPEATS, help="timed rounds per side")
    parser.add_argument("--cores", type=int, default=harness.machine_cores(), help="cores given to each side")
    parser.add_argument("--debian-corpus", default=DEBIAN_DEFAULT,
                        help="a make_bench_corpus.py build ('' to skip that corpus)")  # fmt: skip
    parser.add_argument("--corpora", nargs="+", choices=("peer", "project", "debian"), default=("peer",),
                        help="peer: the peer-like Debian corpus (peer_corpus.py, the realistic figure); project: "
                             "benchmarks/corpus.py (best case); debian: a make_bench_corpus.py build")  # fmt: skip
    parser.add_argument("--unverified", action="store_true",
                        help="our side removes raw LSH candidates (the recipe's verify_pairs: false)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench_dedup"))
    parser.add_argument("--quality-docs", type=int, default=4000, help="documents for precision / recall (0: skip)")
    parser.add_argument("--hash-family", default=HASH_FAMILY["name"], choices=family_names(),
                        help="our MinHash hash family (the recipe's dedup.hash_family; default: the recipe default)")
    parser.add_argument("--no-seed-reference", dest="seed_reference", action="store_false",
                        help="skip the pair agreement of datasketch with itself at another seed")
    parser.add_argument("--cold-spark-workers", action="store_true",
                        help="do not start Spark's Python workers before each Spark round (they start in the round)")
    parser.add_argument("--threshold", type=float, default=0.7, help="exact Jaccard of a true near duplicate")
    args = parser.parse_args()
    HASH_FAMILY["name"] = args.hash_family
    print(f"our hash family: {args.hash_family}; Spark workers {'cold' if args.cold_spark_workers else 'warm'}")
    shutil.rmtree(args.workdir, ignore_errors=True)
    corpora = {}
    if "peer" in args.corpora:
        docs = peer_corpus.write_docs(peer_corpus.load_or_build(args.docs)[: args.docs], args.workdir / "peer")
        corpora["peer"] = docs, peer_corpus.planted_near(docs)
    if "project" in args.corpora:
        corpora["project"] = project_corpus(args.docs, args.workdir / "project")
    if args.debian_corpus and "debian" in args.corpora:
        corpora["debian"] = debian_corpus(Path(args.debian_corpus), args.docs, args.workdir / "debian")
    for name, (docs, _) in corpora.items():
        label = {"peer": "peer-like Debian corpus", "project": "generated: BEST CASE", "debian": "make_bench_corpus"}
        print(peer_corpus.describe(peer_corpus.corpus_stats(docs), label[name]))
    (spark_start, spark), (pool_start, pool) = harness.timed(lambda: spark_session(args.cores)), harness.timed(
        lambda: DatasketchPool(args.cores))
    print(f"cold start: Spark session {spark_start:.1f} s, datasketch pool of {args.cores} processes {pool_start:.1f} s")
    threshold = None if args.unverified else args.threshold
    try:
        ratios = {name: bench(name, docs, planted, spark_runner(spark, args.workdir / name, threshold), pool, args)
                  for name, (docs, planted) in corpora.items()}  # fmt: skip
    finally:
        pool.close()
    print("\nSpark path / datasketch at equal cores: " + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items())
          + f"  (target >= {TARGET_RATIO}x)")  # fmt: skip


if __name__ == "__main__":
    main()
