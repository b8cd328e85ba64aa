"""Spark on Dataproc: the cleaning job as a PySpark job request for the cluster of dataproc.yaml.

On Dataproc the cluster runs the driver, so the job is a main file (marin_assets/data/spark/spark_entry.py,
from the project environment installed on the cluster) plus its arguments; dagster_gcp's
PipesDataprocJobClient submits it, adds the Pipes arguments and Dagster labels, and waits. The
request is built here as the client's own models (google.cloud.dataproc_v1), so a field the API
does not know fails when it is built, not when it is submitted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from marin_assets.data.clean.cleaned_output import CleaningJob
from marin_assets.data.spark.spark_entry import job_args

DATAPROC_YAML = Path(__file__).resolve().parents[2] / "deployments" / "spark" / "dataproc.yaml"
CLUSTER_KEYS = ("project_id", "region", "cluster_name", "labels", "cluster_config_dict")  # DataprocResource's


@dataclass(frozen=True)
class DataprocSpark:
    project_id: str
    region: str
    cluster_name: str
    main_python_file_uri: str  # spark_entry.py where the cluster can read it (file:// on its nodes, gs://)
    python: str  # the interpreter of the project environment on the nodes (driver and executors)
    labels: dict[str, str] = field(default_factory=dict)
    properties: dict[str, str] = field(default_factory=dict)  # spark.* settings of the job
    deploy_mode: str = "cluster"
    max_failures_per_hour: int = 1
    cluster: dict = field(default_factory=dict)  # dagster_gcp.DataprocResource config (creates the cluster)

    @classmethod
    def from_cluster_yaml(cls, path: Path = DATAPROC_YAML) -> DataprocSpark:
        """deployments/spark/dataproc.yaml: the cluster (DataprocResource's config) and its `job` section."""
        config = yaml.safe_load(path.read_text())
        unknown = set(config) - {*CLUSTER_KEYS, "job"}
        if unknown:
            raise ValueError(f"{path}: unknown keys {sorted(unknown)} (known: {[*CLUSTER_KEYS, 'job']})")
        job = config["job"]
        props = config["cluster_config_dict"]["softwareConfig"].get("properties", {})
        spark_props = {k.removeprefix("spark:"): str(v) for k, v in props.items() if k.startswith("spark:")}
        return cls(project_id=config["project_id"], region=config["region"], cluster_name=config["cluster_name"],
                   main_python_file_uri=job["main_python_file_uri"], python=job["python"],
                   labels={k: str(v) for k, v in config.get("labels", {}).items()}, properties=spark_props,
                   deploy_mode=job.get("deploy_mode", "cluster"),
                   max_failures_per_hour=int(job.get("max_failures_per_hour", 1)),
                   cluster={k: config[k] for k in CLUSTER_KEYS if k in config})  # fmt: skip

    @property
    def api_endpoint(self) -> str:
        """Jobs of a regional cluster are served by the region's endpoint, not dataproc.googleapis.com."""
        return f"{self.region}-dataproc.googleapis.com:443"

    def job_properties(self) -> dict[str, str]:
        return {**self.properties, "spark.submit.deployMode": self.deploy_mode,
                "spark.pyspark.python": self.python, "spark.pyspark.driver.python": self.python}  # fmt: skip

    def cleaning_job_params(self, job: CleaningJob) -> dict:
        """submit_job_params for PipesDataprocJobClient.run: the cleaning `job` on this cluster.

        No reference.job_id: the client polls get_job(job_uuid), which names the job only when
        Dataproc assigns the id itself (then id = uuid).
        """
        from google.cloud.dataproc_v1.types import jobs

        request = jobs.SubmitJobRequest(
            project_id=self.project_id,
            region=self.region,
            job=jobs.Job(
                placement=jobs.JobPlacement(cluster_name=self.cluster_name),
                pyspark_job=jobs.PySparkJob(main_python_file_uri=self.main_python_file_uri, args=job_args(job),
                                            properties=self.job_properties()),
                labels={**self.labels, "stage": "cleaning", "source": _label(job.source)},
                scheduling=jobs.JobScheduling(max_failures_per_hour=self.max_failures_per_hour),
            ),
        )  # fmt: skip
        return {"request": request}

    def cluster_resource(self):
        """dagster_gcp.DataprocResource for this cluster (create / delete it around a backfill)."""
        from dagster_gcp import DataprocResource

        return DataprocResource(**self.cluster)


def _label(value: str) -> str:
    """Dataproc label values: lowercase letters, digits, dashes."""
    return value.lower().replace("_", "-")
