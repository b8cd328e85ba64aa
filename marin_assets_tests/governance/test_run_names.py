"""Runs launched outside the stage jobs (UI Materialize button, backfills, automation) get the stage tags."""

from __future__ import annotations

import dagster as dg

from marin_assets_tests.stage_definitions import raw_corpus
from marin_assets.defs.governance.run_names import run_names_sensor
from marin_assets.stage_jobs import ASSET_TAG, PARTITION_TAG, STAGE_JOB_TAG, selection_run_tags
from marin_assets.resources.storage_resource import StorageResource


def started(tmp_path, instance, tags=None) -> dg.ExecuteInProcessResult:
    """raw_corpus[dirty_web] run as Dagster's own asset job runs it: no marin tags of its own."""
    own = dg.Definitions(assets=[raw_corpus], resources={"storage": StorageResource(root_uri=str(tmp_path / "store"))})
    job = own.resolve_implicit_global_asset_job_def()  # the job the UI's Materialize button launches
    assert job.name == "__ASSET_JOB"
    result = job.execute_in_process(partition_key="dirty_web", instance=instance, tags=tags,
                                    asset_selection=[raw_corpus.key])
    assert result.success and result.dagster_run.asset_selection == {raw_corpus.key}
    return result


def tick(instance, result) -> dict[str, str]:
    from marin_assets.definitions import defs

    [start] = [e for e in result.all_events if e.event_type == dg.DagsterEventType.RUN_START]
    context = dg.build_run_status_sensor_context(
        sensor_name=run_names_sensor.name, dagster_event=start, dagster_instance=instance,
        dagster_run=result.dagster_run, repository_def=defs.get_repository_def(),
    )
    run_names_sensor(context)
    return instance.get_run_by_id(result.run_id).tags


def test_a_run_without_tags_is_named_by_its_asset_partition_and_stage_job(tmp_path):
    instance = dg.DagsterInstance.ephemeral()
    tags = tick(instance, started(tmp_path, instance))
    assert tags[ASSET_TAG] == "raw_corpus" and tags[PARTITION_TAG] == "dirty_web"
    assert tags[STAGE_JOB_TAG] == "data_cleaned_documents_job"


def test_tags_set_at_launch_are_kept(tmp_path):
    instance = dg.DagsterInstance.ephemeral()
    tags = tick(instance, started(tmp_path, instance, tags={ASSET_TAG: "cleaned_documents"}))
    assert tags[ASSET_TAG] == "cleaned_documents" and tags[STAGE_JOB_TAG] == "data_cleaned_documents_job"


def test_a_selection_is_named_by_its_most_downstream_asset():
    from marin_assets.definitions import defs

    keys = [dg.AssetKey("raw_corpus"), dg.AssetKey("cleaned_documents")]
    assert selection_run_tags(defs.assets, keys, "dirty_web") == {
        ASSET_TAG: "cleaned_documents", PARTITION_TAG: "dirty_web", STAGE_JOB_TAG: "data_cleaned_documents_job"}
    two_sinks = selection_run_tags(defs.assets, [dg.AssetKey("tokenizer"), dg.AssetKey("quality_classifier")], None)
    assert two_sinks[ASSET_TAG] == "quality_classifier +1 more" and PARTITION_TAG not in two_sinks
