"""Our side of bench_cleaning_filters alone: clean_source's docs/s and where its wall time goes.

Same corpus, recipe and session as bench_cleaning_filters.ours_runner (the datatrove side is left
out, so a development round takes seconds, not minutes). With --stages, Spark's event log is read
back after the rounds: per job, its wall time and the executor run time of its stages.

    .venv/bin/python benchmarks/time_cleaning_job.py [--docs 10000] [--repeat 3] [--cores 2] [--stages]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cleaning_filters import recipe  # noqa: E402
from corpus import build_corpus  # noqa: E402

from marin_assets.data.clean.cleaning_job import clean_source  # noqa: E402
from marin_assets.data.sources.source_registry import SourceSpec  # noqa: E402
from marin_assets.resources.spark import SparkResource  # noqa: E402


def job_times(log_dir: Path) -> list[tuple[int, float, float, str]]:
    """(job id, wall s, executor run s over its stages, first stage's name) per job in the event log."""
    start, end, stages_of, run_ms, names = {}, {}, {}, defaultdict(float), {}
    for path in sorted(p for p in log_dir.rglob("*") if p.is_file()):  # rolling logs: a folder of files
        for line in path.open():
            ev = json.loads(line)
            kind = ev["Event"]
            if kind == "SparkListenerJobStart":
                start[ev["Job ID"]] = ev["Submission Time"]
                stages_of[ev["Job ID"]] = ev["Stage IDs"]
            elif kind == "SparkListenerJobEnd":
                end[ev["Job ID"]] = ev["Completion Time"]
            elif kind == "SparkListenerStageCompleted":
                info = ev["Stage Info"]
                names[info["Stage ID"]] = info["Stage Name"]
                for acc in info.get("Accumulables", []):
                    if acc.get("Name") == "internal.metrics.executorRunTime":
                        run_ms[info["Stage ID"]] += float(acc["Value"])
    out = []
    for job in sorted(start):
        ran = [s for s in stages_of[job] if s in names]
        out.append((job, (end.get(job, start[job]) - start[job]) / 1e3, sum(run_ms[s] for s in ran) / 1e3,
                    " | ".join(names[s].split(" at ")[0] + "@" + names[s].split(":")[-1] for s in ran)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/time_clean"))
    parser.add_argument("--stages", action="store_true", help="print per-job times of the last round")
    args = parser.parse_args()
    corpus = args.workdir / f"corpus-{args.docs}"
    if not corpus.exists():
        build_corpus(args.docs, corpus)
        build_corpus(200, args.workdir / "warmup", seed=1)
    log_dir = args.workdir / "events"
    shutil.rmtree(log_dir, ignore_errors=True)
    log_dir.mkdir(parents=True)
    conf = {"spark.driver.memory": "4g", "spark.ui.showConsoleProgress": "false"}
    if args.stages:
        conf.update({"spark.eventLog.enabled": "true", "spark.eventLog.dir": f"file://{log_dir}",
                     "spark.eventLog.compress": "false", "spark.eventLog.rolling.enabled": "false"})
    spark = SparkResource(master=f"local[{args.cores}]", conf=conf).get_session()
    spark.sparkContext.setLogLevel("ERROR")
    spec = SourceSpec(name="bench", uri=f"{corpus}/*.jsonl", format="jsonl", license="CC0-1.0")
    clean_source(spark, spec.model_copy(update={"uri": f"{args.workdir}/warmup/*.jsonl"}), recipe(),
                 str(args.workdir / "out-warmup"))  # fmt: skip
    rates = []
    for i in range(args.repeat):
        out = args.workdir / f"out-{i}"
        shutil.rmtree(out, ignore_errors=True)
        t0 = time.perf_counter()
        stats = clean_source(spark, spec, recipe(), str(out))
        wall = time.perf_counter() - t0
        assert stats["conserved"], stats
        rates.append(args.docs / wall)
        print(f"round {i}: {wall:.2f} s, {rates[-1]:.0f} docs/s (load {os.getloadavg()[0]:.1f})", flush=True)
    print(f"median {statistics.median(rates):.0f} docs/s, range {min(rates):.0f}-{max(rates):.0f}")
    if args.stages:
        spark.stop()
        jobs = job_times(log_dir)
        last = [j for j in jobs if j[0] >= jobs[-1][0] - (len(jobs) // (args.repeat + 1)) + 1]
        for job, wall, run, name in last:
            print(f"job {job:4d}: wall {wall:6.2f} s  executor {run:6.2f} s  {name}")


if __name__ == "__main__":
    main()
