"""Names the runs that reach no run coordinator: Dagster's own CLI, executing in process.

Runs launched from the UI, sensors, schedules, backfills and automation are submitted through the
instance's run coordinator, which on the local instance (resources/run_coordinator.py) tags them
before they are queued. Two kinds of run are left: those `dg launch` / `dagster asset materialize`
execute in their own process (no coordinator), and every run of an instance whose dagster.yaml
keeps Dagster's plain QueuedRunCoordinator (the production webserver and daemon run Dagster's own
images, without this package). This sensor adds `marin/asset`, `marin/partition` and
`marin/stage_job` to those as they start, where missing, so the runs list, its filters and the
failure catalog name every run the same way.
"""

from __future__ import annotations

import dagster as dg

from marin_assets.core.stage_job_names import selection_run_tags

PARTITION_TAG = "dagster/partition"


def missing_run_tags(run: dg.DagsterRun, assets) -> dict[str, str]:
    """The stage tags `run` lacks (none for runs of non-asset jobs, e.g. storage gc)."""
    keys = run.asset_selection or set()
    if not keys:
        return {}
    wanted = selection_run_tags(assets, keys, run.tags.get(PARTITION_TAG))
    return {k: v for k, v in wanted.items() if k not in run.tags}


@dg.run_status_sensor(
    name="run_names_sensor",
    run_status=dg.DagsterRunStatus.STARTED,
    minimum_interval_seconds=5,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Tags each started run with marin/asset, marin/partition and marin/stage_job where missing "
    "(runs of Dagster's own CLI, or of an instance without marin's run coordinator).",
)
def run_names_sensor(context: dg.RunStatusSensorContext):
    repo = context.repository_def
    if repo is None:
        return
    tags = missing_run_tags(context.dagster_run, list(set(repo.assets_defs_by_key.values())))
    if tags:
        context.instance.add_run_tags(context.dagster_run.run_id, tags)
