"""The cleaning job as a Spark application's main file, for clusters that run the driver (Dataproc).

    python spark_entry.py clean --storage-root gs://bucket/prefix --source S [--peer P ...]
                                [--out gs://.../cleaned/S.staging-x] --values JSON

Writes the cleaned folder through the same function as the in-session backend
(cleaned_output.write_cleaned). With --out it fills that folder (the orchestrator's staging folder,
which the asset commits with its provenance manifest); without it, it commits cleaned/<S>/ under
the storage root itself. --values is the recipe values the orchestrator planned the job with
(cleaning_values.CleaningValues.to_json): the driver checks their hashes and reads no recipe file. Launched by a Pipes client (PipesDataprocJobClient appends the Pipes
arguments) it reports the counts as a Pipes message through GCS; otherwise it prints them.
"""

from __future__ import annotations

import argparse
import json
import sys

from marin_assets.core import layout
from marin_assets.core.gcs_client import gcs_client
from marin_assets.core.storage import Storage
from marin_assets.data.clean.cleaned_output import CleaningJob, write_cleaned
from marin_assets.data.clean.cleaning_values import CleaningValues

COMMAND = "clean"


def job_args(job: CleaningJob) -> list[str]:
    """The driver's arguments for `job` (what parse_args reads back)."""
    args = [COMMAND, "--storage-root", job.storage_root, "--source", job.source, "--out", job.out_dir]
    for peer in job.peers:
        args += ["--peer", peer]
    return args + ["--values", job.values.to_json()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=[COMMAND])
    parser.add_argument("--storage-root", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--peer", action="append", default=[])
    parser.add_argument("--out", default=None, help="folder to fill (default: commit cleaned/<source> itself)")
    parser.add_argument("--values", required=True, help="the job's recipe values, as the orchestrator wrote them")
    args, _pipes_args = parser.parse_known_args(argv)  # the Pipes client appends its own arguments
    return args


def reported_counts(stats: dict) -> dict:
    """The scalar counts a Pipes message carries (the asset checks them against the folder)."""
    return {k: v for k, v in stats.items() if isinstance(v, int | float | str | bool)}


def check_reported(folder_stats: dict, messages: list[dict], job: str) -> None:
    """The driver reported exactly the counts its folder holds (one message); else the run is suspect."""
    reported = [m["stats"] for m in messages if "stats" in m]
    if reported != [reported_counts(folder_stats)]:
        raise RuntimeError(f"{job}: the driver reported {reported} through Pipes, but its folder's stats.json "
                           f"holds {reported_counts(folder_stats)}")


def run(spark, args: argparse.Namespace) -> dict:
    values = CleaningValues.from_json(args.values)
    if args.out:
        return write_cleaned(spark, CleaningJob(args.storage_root, args.source, args.out, args.peer, values))
    with Storage(args.storage_root).atomic_dir(layout.CLEANED, args.source) as staged:
        return write_cleaned(spark, CleaningJob(args.storage_root, args.source, staged.path, args.peer, values))


def main(argv: list[str] | None = None) -> int:
    from dagster_pipes import PipesCliArgsParamsLoader, PipesGCSMessageWriter, open_dagster_pipes
    from pyspark.sql import SparkSession

    args = parse_args(argv)
    spark = SparkSession.builder.appName(f"marin_assets-clean-{args.source}").getOrCreate()
    loader = PipesCliArgsParamsLoader()
    if not loader.is_dagster_pipes_process():
        print(json.dumps(run(spark, args), sort_keys=True))
        return 0
    writer = PipesGCSMessageWriter(client=gcs_client())  # uploads every 10 s, and at once on close
    with open_dagster_pipes(params_loader=loader, message_writer=writer) as pipes:
        stats = run(spark, args)
        pipes.report_custom_message({"stats": reported_counts(stats)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
