"""Stage job names and run tags, derived from the asset graph (declares nothing: any stage may import it).

Every materializable asset belongs to exactly one job named after its stage (asset group) and
partitions definition (stage_jobs.py declares them); `run_tags` and `selection_run_tags` name what a
run built, the same way for materialize-all, the sensors and runs launched from the UI.
"""

from __future__ import annotations

import dagster as dg

ASSET_TAG = "marin/asset"
PARTITION_TAG = "marin/partition"
STAGE_JOB_TAG = "marin/stage_job"  # the stage job, also on runs Dagster launches through its own asset job (UI)
NO_GROUP = "default"


def job_buckets(assets) -> dict[str, list]:
    """job name -> assets (AssetsDefinitions) of that stage sharing one partitions definition."""
    by_group: dict[str, list[list]] = {}
    for definition in sorted((a for a in assets if isinstance(a, dg.AssetsDefinition) and a.is_materializable),
                             key=lambda a: a.key.to_user_string()):
        groups = by_group.setdefault(definition.group_names_by_key.get(definition.key) or NO_GROUP, [])
        for bucket in groups:
            if bucket[0].partitions_def == definition.partitions_def:
                bucket.append(definition)
                break
        else:
            groups.append([definition])
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
    """The tags a stage-job launch of `keys` would carry: named by the selection's most downstream asset
    (as materialize-all names [raw_corpus, cleaned_documents] by cleaned_documents), and its stage job."""
    selected = set(keys)
    by_key = {key: a for a in assets if isinstance(a, dg.AssetsDefinition) for key in a.keys}
    upstream = {dep.asset_key for key in selected if key in by_key for dep in by_key[key].specs_by_key[key].deps}
    sinks = sorted((k for k in selected if k not in upstream), key=lambda k: k.to_user_string())
    if not sinks:
        return {}
    tags = run_tags(sinks[0], partition)
    if len(sinks) > 1:  # a whole group at once: the first and how many more
        tags[ASSET_TAG] = f"{sinks[0].to_user_string()} +{len(sinks) - 1} more"
    try:
        tags[STAGE_JOB_TAG] = job_name_for(assets, sinks[0])
    except KeyError:
        pass  # not materializable (an observation): no stage job
    return tags
