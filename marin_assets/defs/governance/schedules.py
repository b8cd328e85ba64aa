"""Nightly validation wiring: one job per stage, the 03:00 UTC schedule, and the sensor that chains stages."""

from __future__ import annotations

import dagster as dg

from marin_assets.governance.nightly import (
    NIGHT_TAG,
    STAGE_ASSETS,
    STAGE_TAG,
    load_nightly_plan,
    nightly_stages,
    stage_after,
    stage_complete,
    stage_named,
    stage_runs,
)

PARTITION_TAG = "dagster/partition"


def _selection(keys: tuple[str, ...]) -> dg.AssetSelection:
    # By key string, not AssetSelection.assets: a stage asset that is missing (renamed, not yet
    # built) must not stop the whole code location from loading. test_nightly checks they all exist.
    named = dg.AssetSelection.from_string(" or ".join(f'key:"{key}"' for key in keys))
    return named & dg.AssetSelection.all()  # all(): executable assets only, not bare references


nightly_validation_jobs = [
    dg.define_asset_job(
        job_name,
        selection=_selection(keys),
        description=f"Nightly validation stage: {', '.join(keys)}",
        tags={"marin/purpose": "nightly-validation"},
    )
    for job_name, keys in STAGE_ASSETS
]
_JOBS_BY_NAME = {job.name: job for job in nightly_validation_jobs}


def _run_requests(stage_name: str, night: str) -> list[dg.RunRequest]:
    stage = stage_named(nightly_stages(load_nightly_plan()), stage_name)
    return [
        dg.RunRequest(run_key=r.run_key, partition_key=r.partition, tags=r.tags, job_name=r.job_name)
        for r in stage_runs(stage, night)
    ]


@dg.schedule(
    name="nightly_validation_schedule",
    job=nightly_validation_jobs[0],
    cron_schedule="0 3 * * *",
    execution_timezone="UTC",
    # Off until switched on: it trains, and a fresh instance must not start training by itself.
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="03:00 UTC: sample corpus -> tiny training -> loss-curve check (stages chained by "
    "nightly_validation_chain; plan in recipes/nightly.yaml)",
)
def nightly_validation_schedule(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
    night = context.scheduled_execution_time.strftime("%Y%m%dT%H%MZ")
    return _run_requests(nightly_validation_jobs[0].name, night)


@dg.run_status_sensor(
    name="nightly_validation_chain",
    run_status=dg.DagsterRunStatus.SUCCESS,
    monitored_jobs=nightly_validation_jobs[:-1],
    request_jobs=nightly_validation_jobs[1:],
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Starts the next nightly validation stage once every run of the current one succeeded",
)
def nightly_validation_chain(context: dg.RunStatusSensorContext):
    run = context.dagster_run
    night, stage_name = run.tags.get(NIGHT_TAG), run.tags.get(STAGE_TAG)
    if night is None or stage_name not in _JOBS_BY_NAME:
        return dg.SkipReason(f"run {run.run_id} is not part of a nightly validation")
    stages = nightly_stages(load_nightly_plan())
    siblings = context.instance.get_runs(
        filters=dg.RunsFilter(tags={NIGHT_TAG: night, STAGE_TAG: stage_name}, statuses=[dg.DagsterRunStatus.SUCCESS])
    )
    succeeded = {r.tags.get(PARTITION_TAG) for r in siblings}
    if not stage_complete(stage_named(stages, stage_name), succeeded):
        return dg.SkipReason(f"{stage_name} of night {night}: waiting for the other partitions")
    next_stage = stage_after(stages, stage_name)
    if next_stage is None:
        return dg.SkipReason(f"night {night} finished")
    return _run_requests(next_stage.job_name, night)
