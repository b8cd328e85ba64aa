"""Named asset jobs, one per stage (asset group) and partitions definition, derived from the graph.

Dagster lists a run by its job; runs launched from bare asset selections all show as
`__ephemeral_asset_job__`. Every materializable asset belongs to exactly one job named after its
stage: `data`, `train`, ... or, where a stage's assets are partitioned differently (a job's assets
must share one partitions definition), named by its first asset (e.g. `tokenize_mixture`, `scaling_run`; the unpartitioned part keeps the stage's name). The names
follow from the graph, so a new asset needs no job list; `materialize-all`, the sensors and the UI
all launch through these jobs, and `run_tags` names what a run built.
"""

from __future__ import annotations

import dagster as dg

from marin_assets.core.stage_job_names import (  # noqa: F401 (re-exported: where callers found them)
    ASSET_TAG, PARTITION_TAG, STAGE_JOB_TAG, job_buckets, job_name_for, run_tags, selection_run_tags,
)


def stage_jobs(assets) -> list[dg.UnresolvedAssetJobDefinition]:
    return [
        # Each bucket shares one partitions definition, which Dagster infers from the selected assets.
        dg.define_asset_job(name, selection=dg.AssetSelection.assets(*bucket),
                            description=f"Stage {name}: {', '.join(a.key.to_user_string() for a in bucket)}")
        for name, bucket in job_buckets(assets).items()
    ]
