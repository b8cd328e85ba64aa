"""Stage job names and run tags, derived from the asset graph (declares nothing: any stage may import it).

Every materializable asset belongs to exactly one job named after its stage (asset group) and
partitions definition (stage_jobs.py declares them); `run_tags` and `selection_run_tags` name what a
run built, the same way for materialize-all, the sensors, the run coordinator and runs launched from
the UI. The naming works on anything with an asset's key, group, partitions definition and parents:
the code's AssetsDefinitions or the workspace's remote asset graph (run_coordinator.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

import dagster as dg

ASSET_TAG = "marin/asset"
PARTITION_TAG = "marin/partition"
STAGE_JOB_TAG = "marin/stage_job"  # the stage job, also on runs Dagster launches through its own asset job (UI)
NO_GROUP = "default"


class StageAsset(NamedTuple):
    """What job naming needs of a materializable asset."""

    key: dg.AssetKey
    group: str
    partitions_def: dg.PartitionsDefinition | None
    parents: frozenset[dg.AssetKey]


def stage_assets(assets) -> list[StageAsset]:
    """The code's materializable AssetsDefinitions (one asset each), as StageAssets."""
    return [
        StageAsset(a.key, a.group_names_by_key.get(a.key) or NO_GROUP, a.partitions_def,
                   frozenset(dep.asset_key for dep in a.specs_by_key[a.key].deps))
        for a in assets if isinstance(a, dg.AssetsDefinition) and a.is_materializable
    ]


def stage_buckets(assets: Iterable[StageAsset]) -> dict[str, list[StageAsset]]:
    """job name -> the assets of that stage sharing one partitions definition."""
    by_group: dict[str, list[list[StageAsset]]] = {}
    for item in sorted(assets, key=lambda a: a.key.to_user_string()):
        groups = by_group.setdefault(item.group or NO_GROUP, [])
        for bucket in groups:
            if bucket[0].partitions_def == item.partitions_def:
                bucket.append(item)
                break
        else:
            groups.append([item])
    named: dict[str, list[StageAsset]] = {}
    for group, buckets in sorted(by_group.items()):
        for bucket in buckets:
            named[_job_name(group, bucket, len(buckets))] = bucket
    return named


def job_buckets(assets) -> dict[str, list]:
    """job name -> AssetsDefinitions of that stage sharing one partitions definition."""
    by_key = {a.key: a for a in assets if isinstance(a, dg.AssetsDefinition) and a.is_materializable}
    return {name: [by_key[s.key] for s in bucket] for name, bucket in stage_buckets(stage_assets(assets)).items()}


def _job_name(group: str, bucket: list[StageAsset], buckets_in_group: int) -> str:
    """The stage's name for its unpartitioned (or only) bucket; else named by its first asset."""
    # "_job": a job may not share its name with an asset's op (e.g. the scaling_run asset)
    if buckets_in_group == 1 or bucket[0].partitions_def is None:
        return f"{group}_job"
    first = bucket[0].key.to_python_identifier()
    return f"{first}_job" if first.startswith(group) else f"{group}_{first}_job"


def job_name_for(assets, key: dg.AssetKey) -> str:
    for name, bucket in job_buckets(assets).items():
        if any(key in a.keys for a in bucket):
            return name
    raise KeyError(f"{key.to_user_string()} is in no stage job (not a materializable asset)")


def run_tags(key: dg.AssetKey, partition: str | None) -> dict[str, str]:
    tags = {ASSET_TAG: key.to_user_string()}
    if partition is not None:
        tags[PARTITION_TAG] = partition
    return tags


def selection_run_tags(assets, keys, partition: str | None) -> dict[str, str]:
    """The tags a stage-job launch of `keys` would carry (code's AssetsDefinitions)."""
    return stage_selection_tags(stage_assets(assets), keys, partition)


def stage_selection_tags(assets: Iterable[StageAsset], keys, partition: str | None) -> dict[str, str]:
    """Named by the selection's most downstream asset (as materialize-all names [raw_corpus,
    cleaned_documents] by cleaned_documents), its partition and its stage job."""
    assets = list(assets)
    parents: Mapping[dg.AssetKey, frozenset] = {a.key: a.parents for a in assets}
    selected = set(keys)
    upstream = {parent for key in selected for parent in parents.get(key, ())}
    sinks = sorted((k for k in selected if k not in upstream), key=lambda k: k.to_user_string())
    if not sinks:
        return {}
    tags = run_tags(sinks[0], partition)
    if len(sinks) > 1:  # a whole group at once: the first and how many more
        tags[ASSET_TAG] = f"{sinks[0].to_user_string()} +{len(sinks) - 1} more"
    stage = next((name for name, bucket in stage_buckets(assets).items() if any(a.key == sinks[0] for a in bucket)), None)
    if stage is not None:  # none for an observation (not materializable)
        tags[STAGE_JOB_TAG] = stage
    return tags
