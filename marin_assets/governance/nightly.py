"""The nightly small-scale validation: sample corpus -> tiny training -> loss-curve check.

A Dagster run has one partition key, and the chain crosses four partitionings (per source, none,
per mixture, per run), so the night is a sequence of stages, each one job over assets that share a
partitioning. The schedule starts the first stage; a run-status sensor starts the next stage once
every run of the current one has succeeded (a failure stops the night, and the failure catalog
records it). Which sources, mixture and run to use is a recipe: recipes/nightly.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from marin_assets.core.recipes import Recipe, load_recipe

NIGHTLY_RECIPE = "nightly.yaml"
NIGHT_TAG = "marin/nightly"            # the night a run belongs to (the schedule tick, UTC)
STAGE_TAG = "marin/nightly_stage"      # which stage (job) of that night


class NightlyPlan(Recipe):
    sources: list[str] = Field(min_length=1, description="Source partitions of the sample corpus")
    tokenizer_partition: str | None = Field(default=None, description="Partition of `tokenizer`, if it is partitioned")
    mixture: str = Field(description="Partition of `mixture` the tiny run trains on")
    run: str = Field(description="Partition of `training_run`: the tiny validation run (its checks test the loss curve)")


@dataclass(frozen=True)
class NightlyStage:
    job_name: str
    asset_keys: tuple[str, ...]
    partitions: tuple[str | None, ...]  # one run per partition; None: an unpartitioned run


# The stages in order: (job name, asset keys). Keys only, so governance imports no stage module.
STAGE_ASSETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("nightly_data_job", ("raw_corpus", "cleaned_documents")),
    ("nightly_tokenizer_job", ("tokenizer",)),
    ("nightly_tokenize_job", ("tokenized_source",)),
    ("nightly_mixture_job", ("mixture",)),
    ("nightly_training_job", ("training_plan", "training_run")),
)


def load_nightly_plan(path: str | Path = NIGHTLY_RECIPE) -> NightlyPlan:
    """Read at every evaluation (not cached): an edited plan applies from the next night."""
    return load_recipe(path, NightlyPlan)


def nightly_stages(plan: NightlyPlan) -> list[NightlyStage]:
    partitions = {
        "nightly_data_job": tuple(plan.sources),
        "nightly_tokenizer_job": (plan.tokenizer_partition,),
        "nightly_tokenize_job": tuple(plan.sources),
        "nightly_mixture_job": (plan.mixture,),
        "nightly_training_job": (plan.run,),
    }
    return [NightlyStage(job, keys, partitions[job]) for job, keys in STAGE_ASSETS]


def stage_named(stages: list[NightlyStage], job_name: str) -> NightlyStage:
    for stage in stages:
        if stage.job_name == job_name:
            return stage
    raise KeyError(f"{job_name!r} is not a nightly stage; stages: {[s.job_name for s in stages]}")


def stage_after(stages: list[NightlyStage], job_name: str) -> NightlyStage | None:
    index = stages.index(stage_named(stages, job_name))
    return stages[index + 1] if index + 1 < len(stages) else None


def stage_complete(stage: NightlyStage, succeeded_partitions: set[str | None]) -> bool:
    """True once every partition of the stage has a successful run (retries count)."""
    return set(stage.partitions) <= succeeded_partitions


@dataclass(frozen=True)
class StageRun:
    job_name: str
    partition: str | None
    run_key: str  # unique per night, stage and partition: a sensor never launches it twice
    tags: dict[str, str]


def stage_runs(stage: NightlyStage, night: str) -> list[StageRun]:
    return [
        StageRun(
            job_name=stage.job_name,
            partition=partition,
            run_key=f"{night}:{stage.job_name}:{partition or '-'}",
            tags={NIGHT_TAG: night, STAGE_TAG: stage.job_name},
        )
        for partition in stage.partitions
    ]
