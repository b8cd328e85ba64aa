"""The Dataproc cleaning job is built as the Dataproc client's own request models, for the entry that runs it."""

from google.cloud.dataproc_v1.types import jobs

from marin_assets.data.spark_entry import parse_args
from marin_assets.resources.dataproc_spark import DataprocSpark


def _spec() -> DataprocSpark:
    return DataprocSpark.from_cluster_yaml("gs://marin-prod-deploy/marin_assets-0.1-py3-none-any.whl",
                                           "gs://marin-prod-deploy/spark_entry.py", "gs://marin-prod-data/marin")


def test_cleaning_job_is_a_submit_job_request_for_the_configured_cluster():
    params = _spec().cleaning_job_params("dirty_web", ["python_docs", "debian_licenses"])
    request = params["request"]
    assert isinstance(request, jobs.SubmitJobRequest)
    assert jobs.SubmitJobRequest.deserialize(jobs.SubmitJobRequest.serialize(request)) == request  # wire format
    assert (request.project_id, request.region, request.job.placement.cluster_name) == ("marin-prod", "us-east5",
                                                                                        "marin-clean")  # fmt: skip
    pyspark = request.job.pyspark_job
    assert pyspark.main_python_file_uri.endswith("spark_entry.py") and list(pyspark.python_file_uris)[0].endswith(".whl")
    assert pyspark.properties["spark.sql.shuffle.partitions"] == "256"  # from deployments/spark/dataproc.yaml
    assert request.job.labels["source"] == "dirty-web"  # Dataproc labels: lowercase, digits, dashes


def test_the_entry_reads_the_job_arguments_with_the_pipes_client_arguments_appended():
    pyspark = _spec().cleaning_job_params("dirty_web", ["python_docs"])["request"].job.pyspark_job
    # PipesDataprocJobClient appends its bootstrap arguments to pyspark_job.args
    args = parse_args([*pyspark.args, "--dagster-pipes-context", "e30=", "--dagster-pipes-messages", "e30="])
    assert (args.command, args.source, args.peer, args.storage_root) == ("clean", "dirty_web", ["python_docs"],
                                                                          "gs://marin-prod-data/marin")  # fmt: skip
