"""The cleaned folder of one source, written the same way whichever Spark backend runs the job.

    write_cleaned(spark, CleaningJob(storage_root, source, out_dir, peers, values))

writes out_dir/{documents,rejected,quarantine}/part-*.parquet, stats.json (counts, per rule),
reader_counts.json (records per raw file, counted apart from the readers) and rejected_examples.json
(a few rejected documents per rule). The asset's in-session runner and the Dataproc entry
(spark_entry.py) both call it, and the asset builds its metadata from the folder alone
(`read_cleaned`), so a local run and a cluster run commit the same bytes and the same metadata.

The job carries the values of the recipe, source specs and eval sets the orchestrator planned with
(cleaning_values.py); the driver checks their hashes and cleans with them, never reading a recipe file.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass, field

import fsspec

from marin_assets.core.storage import Storage
from marin_assets.data.clean import cleaning_job
from marin_assets.data.clean.cleaning_recipe import CleaningRecipe
from marin_assets.data.clean.cleaning_values import CleaningValues
from marin_assets.data.curate import curation_inputs
from marin_assets.data.sources.source_registry import SourcesRegistry

STATS_NAME = "stats.json"
READER_COUNTS_NAME = "reader_counts.json"  # {raw file: records}, counted by format apart from the readers
EXAMPLES_NAME = "rejected_examples.json"  # per rule, a few rejected documents and the value that tripped it
TABLES = ("documents", "rejected", "quarantine")


@dataclass(frozen=True)
class CleaningJob:
    storage_root: str  # where raw inventories, eval-set indexes and the quality model are read
    source: str
    out_dir: str  # the (staging) folder the cleaned tables go to
    peers: list[str]  # dedup scope global: the other cleared sources
    values: CleaningValues  # the orchestrator's recipe values, checked by the driver


def planned_job(store: Storage, source: str, peers: list[str], out_dir: str, recipe: CleaningRecipe,
                sources: SourcesRegistry, eval_sets: list[str]) -> CleaningJob:  # fmt: skip
    """The job for `source` carrying the values the orchestrator read (`source`'s spec, then its peers')."""
    specs = [sources.get(name) for name in [source, *peers]]
    return CleaningJob(store.root_uri, source, out_dir, list(peers), CleaningValues.planned(recipe, specs, eval_sets))


def write_cleaned(spark, job: CleaningJob) -> dict:
    """Clean job.source (dedup against job.peers) into job.out_dir with the job's values; return the stats written."""
    recipe, specs = job.values.checked()
    if [spec.name for spec in specs] != [job.source, *job.peers]:
        raise ValueError(f"cleaning {job.source}: the job's source specs {[s.name for s in specs]} are not its "
                         f"source then its peers {[job.source, *job.peers]}")
    store = Storage(job.storage_root)
    stats = cleaning_job.clean_sources(spark, specs, recipe, {job.source: job.out_dir},
                                       curation_inputs.eval_indexes(store, recipe, job.values.eval_sets),
                                       curation_inputs.quality_model(store, recipe))[job.source]  # fmt: skip
    stats["dedup_scope"], stats["dedup_against"] = recipe.dedup.scope, list(job.peers)
    _write_json(job.out_dir, READER_COUNTS_NAME, stats.pop("reader_counts"))
    _write_json(job.out_dir, EXAMPLES_NAME, stats.pop("rejected_examples"))
    _write_json(job.out_dir, STATS_NAME, stats)
    return stats


@dataclass(frozen=True)
class CleanedFolder:
    stats: dict
    examples: list[dict]


def read_cleaned(out_dir: str) -> CleanedFolder:
    """What a cleaned folder says about itself; a missing file means the job did not finish."""
    return CleanedFolder(_read_json(out_dir, STATS_NAME), _read_json(out_dir, EXAMPLES_NAME))


def _write_json(out_dir: str, name: str, obj) -> None:
    with fsspec.open(posixpath.join(out_dir, name), "w") as f:
        json.dump(obj, f, indent=2, sort_keys=True, default=str)


def _read_json(out_dir: str, name: str):
    path = posixpath.join(out_dir, name)
    try:
        with fsspec.open(path, "r") as f:
            return json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} is missing: the cleaning job did not write its folder") from None
