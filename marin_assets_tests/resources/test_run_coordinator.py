"""A run launched the way the UI's Materialize button launches it is named before it is queued."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from marin_assets.core.stage_job_names import ASSET_TAG, PARTITION_TAG, STAGE_JOB_TAG, selection_run_tags
from marin_assets_tests.resources import coordinated_defs

COORDINATOR = {"module": "marin_assets.instance.run_coordinator", "class": "StageTaggingRunCoordinator"}
# The mutation the UI sends for Materialize (ui-core LaunchAssetExecutionButton: executionParamsForAssetJob)
LAUNCH = """mutation($p: ExecutionParams!) { launchPipelineExecution(executionParams: $p) {
    __typename ... on LaunchRunSuccess { run { runId } } ... on PythonError { message } } }"""


def launch_from_ui(context, keys: list[str], partition: str | None) -> str:
    from dagster_graphql.test.utils import execute_dagster_graphql

    params = {
        "mode": "default", "runConfigData": "{}",
        "executionMetadata": {"tags": [{"key": "dagster/partition", "value": partition}] if partition else []},
        "selector": {"repositoryLocationName": context.code_location_names[0], "repositoryName": "__repository__",
                     "pipelineName": "__ASSET_JOB", "assetSelection": [{"path": [k]} for k in keys]},
    }
    answer = execute_dagster_graphql(context, LAUNCH, {"p": params}).data["launchPipelineExecution"]
    assert answer["__typename"] == "LaunchRunSuccess", answer
    return answer["run"]["runId"]


@pytest.fixture(scope="module")
def ui_context():
    from dagster_graphql.test.utils import define_out_of_process_context

    with dg.instance_for_test(overrides={"run_coordinator": COORDINATOR}) as instance:
        with define_out_of_process_context(str(Path(coordinated_defs.__file__)), "defs", instance) as context:
            yield context


@pytest.mark.parametrize("keys, partition", [(["raw"], "web"), (["raw", "cleaned"], "books"), (["registry"], None)])
def test_a_ui_launched_run_is_queued_with_the_stage_tags(ui_context, keys, partition):
    run_id = launch_from_ui(ui_context, keys, partition)
    run = ui_context.instance.get_run_by_id(run_id)
    assert run.status == dg.DagsterRunStatus.QUEUED  # no daemon here: nothing but the coordinator touched it
    expected = selection_run_tags(coordinated_defs.defs.assets, [dg.AssetKey(k) for k in keys], partition)
    assert {k: run.tags.get(k) for k in expected} == expected
    assert run.tags[ASSET_TAG] == keys[-1] and run.tags.get(PARTITION_TAG) == partition
    assert run.tags[STAGE_JOB_TAG] == ("data_job" if partition is None else "data_cleaned_job")


def test_the_local_instance_uses_the_coordinator():
    import yaml

    local = Path(__file__).resolve().parents[2] / "deployments" / "local" / "dagster.yaml"
    config = yaml.safe_load(local.read_text())["run_coordinator"]
    assert {k: config[k] for k in ("module", "class")} == COORDINATOR
    with dg.instance_for_test(overrides={"run_coordinator": COORDINATOR}) as instance:
        from marin_assets.instance.run_coordinator import StageTaggingRunCoordinator

        assert isinstance(instance.run_coordinator, StageTaggingRunCoordinator)
        assert isinstance(instance.run_coordinator, dg.QueuedRunCoordinator)  # concurrency limits still apply
