"""Spark on Dataproc: the cleaning job submitted as a PySpark job to a Dataproc cluster.

On Dataproc the cluster runs the driver, so the job is a main file (marin_assets/data/spark_entry.py)
plus this package as a wheel, submitted through dagster_gcp's PipesDataprocJobClient, which adds the
Pipes arguments and Dagster labels and waits for the job; the driver reports its stats back through
Pipes. The request is built here as the client's own models (google.cloud.dataproc_v1), so a field
the API does not know fails when it is built, not when it is submitted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

DATAPROC_YAML = Path(__file__).resolve().parents[2] / "deployments" / "spark" / "dataproc.yaml"


@dataclass(frozen=True)
class DataprocSpark:
    project_id: str
    region: str
    cluster_name: str
    package_uri: str  # gs://.../marin_assets-*.whl, built and uploaded by the deploy
    entry_uri: str  # gs://.../spark_entry.py (a copy of marin_assets/data/spark_entry.py)
    storage_root: str  # MARIN_STORAGE_ROOT the job writes under (gs://)
    properties: dict[str, str] = field(default_factory=dict)
    max_failures_per_hour: int = 1

    @classmethod
    def from_cluster_yaml(cls, package_uri: str, entry_uri: str, storage_root: str,
                          path: Path = DATAPROC_YAML) -> DataprocSpark:
        """The cluster of deployments/spark/dataproc.yaml (also dagster_gcp.DataprocResource's config)."""
        config = yaml.safe_load(path.read_text())
        props = config["cluster_config_dict"]["softwareConfig"].get("properties", {})
        spark_props = {k.removeprefix("spark:"): str(v) for k, v in props.items() if k.startswith("spark:")}
        return cls(config["project_id"], config["region"], config["cluster_name"], package_uri, entry_uri,
                   storage_root, spark_props)  # fmt: skip

    def cleaning_job_params(self, source: str, peers: list[str]) -> dict:
        """submit_job_params for PipesDataprocJobClient.run: clean `source` (dedup against `peers`)."""
        from google.cloud.dataproc_v1.types import jobs

        args = ["clean", "--storage-root", self.storage_root, "--source", source]
        for peer in peers:
            args += ["--peer", peer]
        job = jobs.Job(
            placement=jobs.JobPlacement(cluster_name=self.cluster_name),
            pyspark_job=jobs.PySparkJob(
                main_python_file_uri=self.entry_uri,
                python_file_uris=[self.package_uri],
                args=args,
                properties={**self.properties, "spark.submit.deployMode": "cluster"},
            ),
            labels={"app": "marin-assets", "stage": "cleaning", "source": source.replace("_", "-")},
            scheduling=jobs.JobScheduling(max_failures_per_hour=self.max_failures_per_hour),
        )
        request = jobs.SubmitJobRequest(project_id=self.project_id, region=self.region, job=job)
        return {"request": request}
