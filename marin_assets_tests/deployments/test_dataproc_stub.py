"""cleaned_documents on the dataproc backend, end to end against a stub Dataproc JobController.

The real PipesDataprocJobClient and JobControllerClient talk gRPC to StubDataproc, which runs the
submitted main file (this checkout's spark_entry.py) with spark-submit on local[2]; Pipes messages
travel through the GCS emulator (PipesGCSMessageReader / PipesGCSMessageWriter), the Pipes context
in the job's arguments. The data stays on a local storage root (the stub's "cluster" is this machine).
"""

import sys

import dagster as dg
import pyarrow.parquet as pq
import pytest

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.data.spark import spark_entry
from marin_assets_tests.stage_definitions import cleaned_documents, eval_set, quality_classifier, raw_corpus
from marin_assets.data.clean.cleaned_output import TABLES
from marin_assets.defs.evaluation.decontamination_assets import build_decontamination_asset
from marin_assets.evaluation.task_sets import load_task_sets
from marin_assets.resources.cleaning_runners import CleaningRunnerResource
from marin_assets.resources.dataproc_runner import DataprocBackend
from marin_assets.resources.dataproc_spark import DataprocSpark
from marin_assets.resources.storage_resource import StorageResource
from marin_assets_tests.data.reference_sources import ingest_reference_sources
from marin_assets_tests.conftest import TEST_SPARK
from marin_assets_tests.deployments.stub_dataproc import StubDataproc
from marin_assets_tests.gcs_emulator import gcs_emulator  # noqa: F401  (fixture)

SOURCE = "dirty_web"
SPEC = DataprocSpark.from_cluster_yaml()  # the production cluster's names: the stub serves that cluster
# The stub's cluster is this machine: this checkout's entry and interpreter, a small Spark.
LOCAL_JOB = {"main_python_file_uri": f"file://{spark_entry.__file__}", "python": sys.executable,
             "properties": {**TEST_SPARK.session_conf(), "spark.executor.memory": "1g"}}  # fmt: skip
RUN_SPECIFIC = ("provenance", "provenance_manifest", "spark_backend", "spark_master", "dataproc_job_id",
                "dataproc_cluster")  # fmt: skip


@pytest.fixture
def dataproc(tmp_path):
    with StubDataproc(SPEC.project_id, SPEC.region, SPEC.cluster_name, tmp_path / "dataproc") as stub:
        yield stub


@pytest.fixture
def short_pipes_drain(monkeypatch):
    """Dagster's readers wait 10 s after a session closes for late messages."""
    from dagster._core.pipes import utils

    monkeypatch.setattr(utils, "WAIT_FOR_LOGS_AFTER_EXECUTION_INTERVAL", 1)


def _on_dataproc(stub: StubDataproc, bucket: str) -> CleaningRunnerResource:
    return CleaningRunnerResource(backend="dataproc", spark=TEST_SPARK, dataproc=DataprocBackend(
        pipes_bucket=bucket, endpoint=stub.endpoint, insecure=True, poll_interval_s=0.5, pipes_interval_s=0.5,
        **LOCAL_JOB))  # fmt: skip


def _materialize(root, assets, runner, partition: str | None = SOURCE, instance=None):
    resources = {"storage": StorageResource(root_uri=str(root)), "spark": TEST_SPARK, "cleaning_runner": runner}
    return dg.materialize(assets, resources=resources, partition_key=partition, instance=instance,
                          raise_on_error=False)


def _cleaned(store: Storage) -> tuple[str, dict]:
    """The committed folder's content hash and its tables' rows."""
    rows = {}
    for rel in store.list_files(layout.CLEANED, SOURCE):
        if rel.split("/")[0] in TABLES:
            rows[rel] = pq.read_table(store.uri(layout.CLEANED, SOURCE, rel)).to_pylist()
    return store.content_hash(layout.CLEANED, SOURCE), rows


def _metadata(result) -> dict:
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key == cleaned_documents.key]
    return event.materialization.metadata


@pytest.mark.slow
def test_dataproc_backend_commits_the_same_folder_as_the_in_session_backend(tmp_path, dataproc, gcs_emulator,
                                                                           short_pipes_drain):  # fmt: skip
    root, in_session = tmp_path / "store", CleaningRunnerResource(spark=TEST_SPARK)
    instance = dg.DagsterInstance.ephemeral()  # one instance: both runs record the same inputs
    assert _materialize(root, [eval_set], in_session, "handbook_passages", instance).success
    assert _materialize(root, [build_decontamination_asset(load_task_sets())], in_session, None, instance).success
    ingest_reference_sources(root, instance)
    assert _materialize(root, [quality_classifier], in_session, None, instance).success
    local = _materialize(root, [raw_corpus, cleaned_documents], in_session, instance=instance)
    assert local.success
    store = Storage(str(root))
    local_hash, local_rows = _cleaned(store)

    # the same selection as the local run, so both record their inputs alike
    remote = _materialize(root, [raw_corpus, cleaned_documents], _on_dataproc(dataproc, gcs_emulator.bucket),
                          instance=instance)
    assert remote.success
    remote_hash, remote_rows = _cleaned(store)
    assert remote_rows == local_rows and sum(len(r) for r in remote_rows.values()) > 0
    assert remote_hash == local_hash  # byte-identical: parquet, stats.json, reader_counts.json, examples
    local_meta, remote_meta = _metadata(local), _metadata(remote)
    assert {k: v for k, v in remote_meta.items() if k not in RUN_SPECIFIC} == {
        k: v for k, v in local_meta.items() if k not in RUN_SPECIFIC}  # fmt: skip
    assert (local_meta["spark_backend"].value, remote_meta["spark_backend"].value) == ("in_session", "dataproc")

    [(_, request)] = [r for r in dataproc.requests if r[0] == "SubmitJob"]
    [job_id] = dataproc.jobs
    assert remote_meta["dataproc_job_id"].value == job_id
    assert request.job.labels["dagster-run-id"] == remote.run_id and request.job.labels["source"] == "dirty-web"
    args = list(request.job.pyspark_job.args)
    assert "--dagster-pipes-context" in args and "--dagster-pipes-messages" in args  # added by the Pipes client
    assert spark_entry.parse_args(args).out.startswith(store.uri(layout.CLEANED, SOURCE) + ".staging-")
    states = [s.state.name for s in dataproc.jobs[job_id].status_history] + [dataproc.jobs[job_id].status.state.name]
    assert states == ["PENDING", "RUNNING", "DONE"]
    assert any(name == "GetJob" and r.job_id == job_id for name, r in dataproc.requests)  # polled by its uuid


@pytest.mark.slow
def test_a_failed_dataproc_job_names_the_job_and_the_driver_error_and_commits_nothing(tmp_path, dataproc,
                                                                                      gcs_emulator,
                                                                                      short_pipes_drain):  # fmt: skip
    root, in_session = tmp_path / "store", CleaningRunnerResource(spark=TEST_SPARK)
    assert _materialize(root, [raw_corpus], in_session).success
    # no eval_set index committed: decontamination cannot run, and the driver says so
    result = _materialize(root, [cleaned_documents], _on_dataproc(dataproc, gcs_emulator.bucket))
    assert not result.success
    [job_id] = dataproc.jobs
    [failure] = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    error = failure.event_specific_data.error.to_string()
    assert "DataprocJobFailed" in error and f"Dataproc job {job_id} on cluster {SPEC.cluster_name}" in error
    assert "ended ERROR: Job failed with message [" in error
    assert "StorageError: decontamination is on but eval_set[" in error and "is not materialized" in error
    assert f"driver output: file://{tmp_path / 'dataproc' / job_id / 'driveroutput'}" in error
    cleaned = root / "cleaned"
    assert not (cleaned / SOURCE).exists() and not list(cleaned.glob("*.staging-*"))
