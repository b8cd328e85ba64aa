"""The cleaning job as a Spark application's main file, for clusters that run the driver (Dataproc).

    python spark_entry.py clean --storage-root gs://bucket/prefix --source S [--peer P ...]

Writes cleaned/<S>/ under the storage root atomically (with stats.json), and reports the stats to
Dagster through Pipes when a Pipes client launched it (PipesDataprocJobClient), else prints them.
"""

from __future__ import annotations

import argparse
import json
import sys

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.data.cleaning_job import clean_sources
from marin_assets.data.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.sources import load_sources

STATS_NAME = "stats.json"


def run_cleaning(spark, storage_root: str, source: str, peers: list[str]) -> dict:
    sources, recipe = load_sources(), load_cleaning_recipe()
    store = Storage(storage_root)
    with store.atomic_dir(layout.CLEANED, source) as staged:
        specs = [sources.get(name) for name in [source, *peers]]
        stats = clean_sources(spark, specs, recipe, {source: staged.path})[source]
        stats["dedup_scope"], stats["dedup_against"] = recipe.dedup.scope, peers
        staged.write_json(stats, STATS_NAME)
    return stats


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["clean"])
    parser.add_argument("--storage-root", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--peer", action="append", default=[])
    args, _pipes_args = parser.parse_known_args(argv)  # the Pipes client appends its own arguments
    return args


def main(argv: list[str] | None = None) -> int:
    from dagster_pipes import PipesCliArgsParamsLoader, open_dagster_pipes
    from pyspark.sql import SparkSession

    args = parse_args(argv)
    spark = SparkSession.builder.appName(f"marin_assets-clean-{args.source}").getOrCreate()
    loader = PipesCliArgsParamsLoader()
    if not loader.is_dagster_pipes_process():
        print(json.dumps(run_cleaning(spark, args.storage_root, args.source, args.peer), sort_keys=True))
        return 0
    with open_dagster_pipes(params_loader=loader) as pipes:
        stats = run_cleaning(spark, args.storage_root, args.source, args.peer)
        pipes.report_asset_materialization(
            metadata={k: v for k, v in stats.items() if isinstance(v, int | float | str | bool)}
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
