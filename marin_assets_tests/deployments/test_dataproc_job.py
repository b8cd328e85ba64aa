"""The Dataproc cleaning job is built as the Dataproc client's own request models, from dataproc.yaml,
for the entry that runs it; the backend is picked by configuration."""

import pytest
import yaml
from dagster_gcp import DataprocResource
from google.cloud.dataproc_v1.types import jobs

from marin_assets.data.clean.cleaned_output import CleaningJob
from marin_assets.data.clean.cleaning_recipe import CleaningRecipe
from marin_assets.data.clean.cleaning_values import CleaningValues
from marin_assets.data.spark.spark_entry import check_reported, parse_args, reported_counts
from marin_assets.resources.cleaning_runners import CleaningRunnerResource
from marin_assets.resources.dataproc_runner import DataprocRunner
from marin_assets.resources.dataproc_spark import DATAPROC_YAML, DataprocSpark
from marin_assets_tests.conftest import TEST_SPARK

JOB = CleaningJob("gs://marin-prod-data/marin", "dirty_web", "gs://marin-prod-data/marin/cleaned/dirty_web.staging-1",
                  ["python_docs", "debian_licenses"],
                  CleaningValues.planned(CleaningRecipe(), [], ["blimp"]))  # fmt: skip


def test_cleaning_job_is_a_submit_job_request_for_the_configured_cluster():
    config = yaml.safe_load(DATAPROC_YAML.read_text())
    request = DataprocSpark.from_cluster_yaml().cleaning_job_params(JOB)["request"]
    assert isinstance(request, jobs.SubmitJobRequest)
    assert jobs.SubmitJobRequest.deserialize(jobs.SubmitJobRequest.serialize(request)) == request  # wire format
    assert (request.project_id, request.region, request.job.placement.cluster_name) == (
        config["project_id"], config["region"], config["cluster_name"])  # fmt: skip
    assert not request.job.reference.job_id  # Dataproc assigns it (= the uuid the Pipes client polls)
    pyspark = request.job.pyspark_job
    assert pyspark.main_python_file_uri == config["job"]["main_python_file_uri"]
    assert pyspark.main_python_file_uri.endswith("/marin_assets/data/spark/spark_entry.py")
    assert not pyspark.python_file_uris  # the package is the cluster's environment, not a file shipped per job
    assert list(pyspark.args) == ["clean", "--storage-root", JOB.storage_root, "--source", "dirty_web", "--out",
                                  JOB.out_dir, "--peer", "python_docs", "--peer", "debian_licenses",
                                  "--values", JOB.values.to_json()]  # fmt: skip
    props = pyspark.properties
    assert props["spark.sql.shuffle.partitions"] == "256" and props["spark.executor.memory"] == "48g"  # the YAML's
    assert props["spark.pyspark.python"] == props["spark.pyspark.driver.python"] == config["job"]["python"]
    assert props["spark.submit.deployMode"] == config["job"]["deploy_mode"] == "cluster"
    assert dict(request.job.labels) == {"app": "marin-assets", "stage": "cleaning", "source": "dirty-web"}
    assert request.job.scheduling.max_failures_per_hour == config["job"]["max_failures_per_hour"]


def test_every_yaml_field_is_read_and_the_cluster_is_a_dataproc_resource(tmp_path):
    spec = DataprocSpark.from_cluster_yaml()
    resource = spec.cluster_resource()
    assert isinstance(resource, DataprocResource)
    config = yaml.safe_load(DATAPROC_YAML.read_text())
    assert {k: v for k, v in config.items() if k != "job"} == spec.cluster  # all of it goes to DataprocResource
    assert resource.cluster_config_dict == config["cluster_config_dict"] and resource.labels == config["labels"]
    assert spec.api_endpoint == f"{config['region']}-dataproc.googleapis.com:443"
    (tmp_path / "dataproc.yaml").write_text(yaml.safe_dump({**config, "jobs": {}}))
    with pytest.raises(ValueError, match="unknown keys \\['jobs'\\]"):  # a typo is an error, not ignored
        DataprocSpark.from_cluster_yaml(tmp_path / "dataproc.yaml")


def test_the_entry_reads_the_job_arguments_with_the_pipes_client_arguments_appended():
    pyspark = DataprocSpark.from_cluster_yaml().cleaning_job_params(JOB)["request"].job.pyspark_job
    # PipesDataprocJobClient appends its bootstrap arguments to pyspark_job.args
    args = parse_args([*pyspark.args, "--dagster-pipes-context", "e30=", "--dagster-pipes-messages", "e30="])
    assert (args.command, args.source, args.peer, args.storage_root, args.out) == (
        "clean", "dirty_web", JOB.peers, JOB.storage_root, JOB.out_dir)  # fmt: skip
    assert CleaningValues.from_json(args.values) == JOB.values  # the recipe values, whole, with their hashes


def test_the_backend_is_picked_by_name_and_an_unknown_name_is_refused():
    runner = CleaningRunnerResource(backend="dataproc", spark=TEST_SPARK).runner()
    assert isinstance(runner, DataprocRunner)
    with pytest.raises(Exception, match="unknown Spark backend 'emr'.*'dataproc', 'in_session'"):
        CleaningRunnerResource(backend="emr", spark=TEST_SPARK)


def test_counts_the_driver_reports_must_be_the_folders():
    stats = {"records_in": 49, "kept": 30, "rejected_by_rule": {"short": 3}}
    check_reported(stats, [{"stats": reported_counts(stats)}], "job j1")  # the table stays out of the message
    with pytest.raises(RuntimeError, match="job j1: the driver reported .*'kept': 31"):
        check_reported(stats, [{"stats": {**reported_counts(stats), "kept": 31}}], "job j1")
    with pytest.raises(RuntimeError, match=r"job j1: the driver reported \[\]"):
        check_reported(stats, [], "job j1")  # no message: the run cannot vouch for its folder
