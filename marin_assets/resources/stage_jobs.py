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

ASSET_TAG = "marin/asset"
PARTITION_TAG = "marin/partition"
NO_GROUP = "default"


def _buckets(assets) -> dict[str, list]:
    """job name -> assets (AssetsDefinitions) of that stage sharing one partitions definition."""
    by_group: dict[str, list[list]] = {}
    for asset in sorted((a for a in assets if isinstance(a, dg.AssetsDefinition) and a.is_materializable),
                        key=lambda a: a.key.to_user_string()):
        groups = by_group.setdefault(asset.group_names_by_key.get(asset.key) or NO_GROUP, [])
        for bucket in groups:
            if bucket[0].partitions_def == asset.partitions_def:
                bucket.append(asset)
                break
        else:
            groups.append([asset])
    named: dict[str, list] = {}
    for group, buckets in sorted(by_group.items()):
        for bucket in buckets:
            named[_job_name(group, bucket, len(buckets))] = bucket
    return named


def _job_name(group: str, bucket: list, buckets_in_group: int) -> str:
    """The stage's name for its unpartitioned (or only) bucket; else named by its first asset."""
    # "_job": a job may not share its name with an asset's op (e.g. the scaling_run asset)
    if buckets_in_group == 1 or bucket[0].partitions_def is None:
        return f"{group}_job"
    first = bucket[0].key.to_python_identifier()
    return f"{first}_job" if first.startswith(group) else f"{group}_{first}_job"


def stage_jobs(assets) -> list[dg.UnresolvedAssetJobDefinition]:
    return [
        # Each bucket shares one partitions definition, which Dagster infers from the selected assets.
        dg.define_asset_job(name, selection=dg.AssetSelection.assets(*bucket),
                            description=f"Stage {name}: {', '.join(a.key.to_user_string() for a in bucket)}")
        for name, bucket in _buckets(assets).items()
    ]


def job_name_for(assets, key: dg.AssetKey) -> str:
    for name, bucket in _buckets(assets).items():
        if any(key in a.keys for a in bucket):
            return name
    raise KeyError(f"{key.to_user_string()} is in no stage job (not a materializable asset)")


def run_tags(key: dg.AssetKey, partition: str | None) -> dict[str, str]:
    tags = {ASSET_TAG: key.to_user_string()}
    if partition is not None:
        tags[PARTITION_TAG] = partition
    return tags
