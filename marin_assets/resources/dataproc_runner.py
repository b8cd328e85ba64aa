"""The dataproc cleaning runner: submit the job through PipesDataprocJobClient and wait for it.

The request comes from DataprocSpark (deployments/spark/dataproc.yaml); the driver
(data/spark_entry.py) fills the asset's staging folder under the gs:// storage root and reports its
counts as a Pipes message through GCS (PipesGCSMessageReader on MARIN_PIPES_BUCKET; the context
travels in the job's arguments). After the job the folder's stats must equal the reported ones.
A failed job raises DataprocJobFailed naming the job id and Dataproc's status details (the driver's
error and where its output is); the asset's staging folder is then dropped, nothing is committed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import dagster as dg
from pydantic import Field

from marin_assets.data.clean.cleaned_output import CleaningJob, read_cleaned
from marin_assets.core.gcs_client import gcs_client
from marin_assets.data.spark.spark_entry import check_reported
from marin_assets.resources.dataproc_spark import DATAPROC_YAML, DataprocSpark


class DataprocJobFailed(RuntimeError):
    pass


class DataprocBackend(dg.Config):
    cluster_yaml: str = Field(default=str(DATAPROC_YAML), description="deployments/spark/dataproc.yaml")
    pipes_bucket: str = Field(default="", description="GCS bucket for Pipes messages (MARIN_PIPES_BUCKET)")
    endpoint: str | None = Field(default=None, description="JobController host:port (default: the region's)")
    insecure: bool = Field(default=False, description="plaintext gRPC to `endpoint` (a local stub server)")
    poll_interval_s: float = 5.0
    pipes_interval_s: float = 10.0
    # Overrides of the YAML's job section (a test cluster runs this checkout's entry and interpreter).
    main_python_file_uri: str | None = None
    python: str | None = None
    properties: dict[str, str] = Field(default_factory=dict, description="spark.* settings over the YAML's")

    def spec(self) -> DataprocSpark:
        spec = DataprocSpark.from_cluster_yaml(Path(self.cluster_yaml))
        return dataclasses.replace(spec, main_python_file_uri=self.main_python_file_uri or spec.main_python_file_uri,
                                   python=self.python or spec.python,
                                   properties={**spec.properties, **self.properties})  # fmt: skip

    def job_controller(self, spec: DataprocSpark):
        import grpc
        from google.cloud.dataproc_v1.services.job_controller.transports import JobControllerGrpcTransport

        if self.insecure:
            return _recording_controller(transport=JobControllerGrpcTransport(
                channel=grpc.insecure_channel(self.endpoint)))  # fmt: skip
        return _recording_controller(client_options={"api_endpoint": self.endpoint or spec.api_endpoint})


def _recording_controller(**kwargs):
    """A JobControllerClient that keeps the job it submitted: the Pipes client's error does not name it.
    Built on first use: the Dataproc client takes a while to import."""
    from google.cloud.dataproc_v1 import JobControllerClient

    class RecordingJobController(JobControllerClient):
        submitted = None

        def submit_job(self, *args, **kwargs):
            self.submitted = super().submit_job(*args, **kwargs)
            return self.submitted

    return RecordingJobController(**kwargs)


class DataprocRunner:
    def __init__(self, settings: DataprocBackend):
        self.settings = settings

    def run(self, context: dg.AssetExecutionContext, task: CleaningJob) -> dict:
        from dagster_gcp.pipes import PipesDataprocJobClient, PipesGCSMessageReader

        if not self.settings.pipes_bucket:
            raise ValueError("the dataproc Spark backend needs a Pipes bucket: set MARIN_PIPES_BUCKET")
        if "://" not in task.out_dir or task.out_dir.startswith("file://"):
            context.log.warning(f"Dataproc writes to {task.out_dir}: a local path, readable only on this machine")
        spec = self.settings.spec()
        controller = self.settings.job_controller(spec)
        reader = PipesGCSMessageReader(bucket=self.settings.pipes_bucket, client=gcs_client(),
                                       interval=self.settings.pipes_interval_s)  # fmt: skip
        client = PipesDataprocJobClient(message_reader=reader, client=controller,
                                        poll_interval=self.settings.poll_interval_s)  # fmt: skip
        try:
            invocation = client.run(context=context, submit_job_params=spec.cleaning_job_params(task))
        except RuntimeError as exc:
            raise DataprocJobFailed(_failure(controller, spec, exc)) from exc
        job_id = controller.submitted.reference.job_id
        name = f"Dataproc job {job_id} (cluster {spec.cluster_name})"
        check_reported(read_cleaned(task.out_dir).stats, invocation.get_custom_messages(), name)
        return {"spark_backend": "dataproc", "dataproc_job_id": job_id, "dataproc_cluster": spec.cluster_name}


def _failure(controller, spec: DataprocSpark, exc: Exception) -> str:
    submitted = controller.submitted
    if submitted is None:
        return f"submitting the cleaning job to Dataproc cluster {spec.cluster_name} failed: {exc}"
    job_id = submitted.reference.job_id
    final = controller.get_job(project_id=spec.project_id, region=spec.region, job_id=job_id)
    return (f"Dataproc job {job_id} on cluster {spec.cluster_name} ({spec.project_id}/{spec.region}) ended "
            f"{final.status.state.name}: {final.status.details or exc}; driver output: "
            f"{final.driver_output_resource_uri or 'none recorded'}")  # fmt: skip
