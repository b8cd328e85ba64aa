"""The instance's run coordinator: Dagster's run queue, naming each run as it is submitted.

The UI's Materialize button launches Dagster's own `__ASSET_JOB` (the UI picks the first of an
asset's jobs by name, and `__ASSET_JOB` sorts first), and backfills, sensors and declarative
automation launch asset jobs whose definitions cannot carry per-asset run tags. Every one of those
launches is submitted through the instance's run coordinator (a public extension point of
dagster.yaml), so this one adds `marin/asset`, `marin/partition` and `marin/stage_job` before the
run is queued: the tags are there from the run's first moment, named from the workspace's asset
graph exactly as materialize-all names its runs (stage_job_names.py). Runs executed in process by
Dagster's own CLI (`dg launch`, `dagster asset materialize`) never reach a coordinator; the
governance stage's run_names_sensor names those when they start.
"""

from __future__ import annotations

import dagster as dg

from marin_assets.core.stage_job_names import StageAsset, stage_selection_tags

PARTITION_TAG = "dagster/partition"


def remote_stage_assets(asset_graph) -> list[StageAsset]:
    """The workspace's materializable assets (a RemoteWorkspaceAssetGraph's nodes), as StageAssets."""
    return [StageAsset(node.key, node.group_name, node.partitions_def, frozenset(node.parent_keys))
            for node in asset_graph.asset_nodes if node.is_materializable]


def submitted_run_tags(run: dg.DagsterRun, asset_graph) -> dict[str, str]:
    """The stage tags `run` lacks (none for runs that select no assets, e.g. storage gc)."""
    keys = run.asset_selection or set()
    if not keys:
        return {}
    wanted = stage_selection_tags(remote_stage_assets(asset_graph), keys, run.tags.get(PARTITION_TAG))
    return {k: v for k, v in wanted.items() if k not in run.tags}


class StageTaggingRunCoordinator(dg.QueuedRunCoordinator):
    """QueuedRunCoordinator (same config, queue and limits) that tags each run before queuing it."""

    def submit_run(self, context: dg.SubmitRunContext) -> dg.DagsterRun:
        run, workspace = context.dagster_run, context.workspace
        tags = submitted_run_tags(run, workspace.asset_graph)
        if tags:
            workspace.instance.add_run_tags(run.run_id, tags)
            run = workspace.instance.get_run_by_id(run.run_id) or run
        return super().submit_run(dg.SubmitRunContext(run, workspace))
