"""A real failing materialization on a real instance, recorded by evaluating the run-failure sensor."""

import contextlib
import datetime as dt
import io

import dagster as dg
import pytest

from marin_assets.cli import main
from marin_assets.core.storage import Storage
from marin_assets.defs.governance.governance_assets import failure_catalog
from marin_assets.governance.failure_catalog import (
    failure_record,
    list_failures,
    search_failures,
    step_failure,
    summary_markdown,
    write_failure,
)
from marin_assets.defs.governance.sensors import failure_catalog_sensor
from marin_assets_tests.local_resources import local_resources

SHARDS = dg.StaticPartitionsDefinition(["shard-a", "shard-b"])


@dg.asset(partitions_def=SHARDS, code_version="v7")
def flaky_tokenized(context: dg.AssetExecutionContext) -> None:
    context.log.info("reading shard before the crash")
    raise ValueError(f"vocab mismatch in {context.partition_key}: expected 512, got 1024")


def _record(run_id: str, failed_at: dt.datetime, message: str) -> dict:
    step = step_failure("train", ["training_run"], [
        ("DagsterExecutionStepExecutionError", "Error occurred while executing op", ["wrapper"]),
        ("RuntimeError", message, ["  File x.py, line 1\n"]),
    ])
    return failure_record(
        run_id=run_id, job_name="nightly_training_job", failed_at=failed_at, partition="tiny",
        assets=["training_run"], steps=[step], run_error="run failed", log_tail=["a", "b"], tags={},
        run_config={}, code_versions={"training_run": "abc"}, environment={"git_commit": "c0ffee"},
    )


def test_records_are_listed_newest_first_and_searchable(tmp_path):
    storage = Storage(str(tmp_path))
    old = _record("run-old", dt.datetime(2026, 1, 1, tzinfo=dt.UTC), "loss is NaN at step 40")
    new = _record("run-new", dt.datetime(2026, 1, 2, tzinfo=dt.UTC), "out of memory")
    for record in (old, new):
        write_failure(storage, record)
    assert old["steps"][0]["error_class"] == "RuntimeError"  # the user error, not Dagster's wrapper
    assert [r["run_id"] for r in list_failures(storage)] == ["run-new", "run-old"]
    assert [r["run_id"] for r in search_failures(list_failures(storage), "nan AT STEP")] == ["run-old"]
    assert "RuntimeError: out of memory" in summary_markdown(list_failures(storage))


def test_unreadable_record_is_an_error_naming_the_file(tmp_path):
    storage = Storage(str(tmp_path))
    storage.write_bytes_atomic(b"{not json", "governance", "failure_catalog", "broken.json")
    with pytest.raises(ValueError, match="broken.json"):
        list_failures(storage)


def _cli(*args: str) -> str:
    """The `marin` CLI's stdout. Not pytest's capsys: its sys.stdout swap, alive while Dagster's in-process
    run redirects the step's output, left an xdist worker's capture closed (every later test errored)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(args)) == 0
    return out.getvalue()


def test_failed_materialization_is_recorded_by_the_sensor(tmp_path):
    root = str(tmp_path / "storage")
    defs = dg.Definitions(assets=[flaky_tokenized], sensors=[failure_catalog_sensor])
    job = defs.resolve_implicit_global_asset_job_def()
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        result = job.execute_in_process(instance=instance, partition_key="shard-b", raise_on_error=False)
        assert not result.success
        context = dg.build_run_status_sensor_context(
            sensor_name="failure_catalog_sensor",
            dagster_instance=instance,
            dagster_run=result.dagster_run,
            dagster_event=result.get_run_failure_event(),
            resources=local_resources(root),
            repository_def=defs.get_repository_def(),
        ).for_run_failure()
        failure_catalog_sensor(context)

        [record] = list_failures(Storage(root))
        assert record["run_id"] == result.run_id
        assert record["partition"] == "shard-b"
        assert record["assets"] == ["flaky_tokenized"]
        [step] = record["steps"]
        assert step["step_key"] == "flaky_tokenized" and step["assets"] == ["flaky_tokenized"]
        assert step["error_class"] == "ValueError"
        assert step["message"] == "vocab mismatch in shard-b: expected 512, got 1024"
        assert any("flaky_tokenized" in line for line in step["stack_tail"])
        assert any("reading shard before the crash" in line for line in record["log_tail"])
        assert record["recipe"]["code_versions"] == {"flaky_tokenized": "v7"}
        assert record["provenance"]["uv_lock_sha256"]

        # The catalog as an asset: a count and a table in the UI.
        materialized = dg.materialize([failure_catalog], instance=instance,
                                      resources=local_resources(root))
        metadata = materialized.asset_materializations_for_node("failure_catalog")[0].metadata
        assert metadata["failures"].value == 1
        assert metadata["latest"].value.records[0].data["error"].startswith("ValueError: vocab mismatch")

    assert result.run_id[:8] in _cli("failures", "search", "vocab mismatch", "--storage-root", root)
    assert "no failures recorded" in _cli("failures", "search", "no such text", "--storage-root", root)
    assert '"partition": "shard-b"' in _cli("failures", "show", result.run_id[:8], "--storage-root", root)


def test_a_failed_training_run_links_its_last_complete_checkpoint_and_renders_as_an_issue(tmp_path):
    """The launch tags the run with its checkpoint folder; the record links the newest *complete* step
    (orbax's marker written), and `marin failures show RUN --markdown` prints a ready-to-file issue."""
    from marin_assets.core.checkpoint_folders import CHECKPOINTS_TAG, COMPLETE_MARKER

    checkpoints = tmp_path / "training" / "tiny" / "checkpoints"
    for step, complete in ((100, True), (200, True), (300, False)):  # 300: interrupted mid-write
        (checkpoints / str(step)).mkdir(parents=True)
        if complete:
            (checkpoints / str(step) / COMPLETE_MARKER).write_text("{}")

    @dg.asset(partitions_def=SHARDS)
    def crashing_run(context: dg.AssetExecutionContext) -> None:
        context.instance.add_run_tags(context.run_id, {CHECKPOINTS_TAG: str(checkpoints)})
        raise RuntimeError("loss is NaN at step 250")

    root = str(tmp_path / "storage")
    defs = dg.Definitions(assets=[crashing_run], sensors=[failure_catalog_sensor])
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
            instance=instance, partition_key="shard-a", raise_on_error=False)
        context = dg.build_run_status_sensor_context(
            sensor_name="failure_catalog_sensor", dagster_instance=instance,
            dagster_run=instance.get_run_by_id(result.run_id), dagster_event=result.get_run_failure_event(),
            resources=local_resources(root), repository_def=defs.get_repository_def(),
        ).for_run_failure()
        failure_catalog_sensor(context)
    [record] = list_failures(Storage(root))
    assert record["last_checkpoint"] == f"{checkpoints}/200"
    text = _cli("failures", "show", result.run_id[:8], "--markdown", "--storage-root", root)
    assert text.startswith("# Failed run: crashing_run[shard-a]")
    assert f"- last complete checkpoint: `{checkpoints}/200`" in text
    assert "## Step `crashing_run`: RuntimeError" in text and "loss is NaN at step 250" in text
    assert "dg launch --assets crashing_run --partition shard-a" in text
