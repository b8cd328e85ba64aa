"""deployments/spark: each cluster option loads into the resource that uses it."""

from pathlib import Path

import yaml
from dagster_gcp import DataprocResource

from marin_assets.resources.spark import SparkResource

SPARK = Path(__file__).resolve().parents[2] / "deployments" / "spark"
VALUES = yaml.safe_load((SPARK.parents[0] / "helm" / "values.yaml").read_text())


def test_spark_on_kubernetes_config_is_a_spark_resource():
    config = yaml.safe_load((SPARK / "spark-on-k8s.yaml").read_text())
    resource = SparkResource(**config)
    assert resource.master.startswith("k8s://")
    assert all(key.startswith("spark.") and isinstance(value, str) for key, value in resource.conf.items())
    assert resource.conf["spark.kubernetes.authenticate.driver.serviceAccountName"] == VALUES["serviceAccount"]["name"]
    # Executors run the same interpreter path as the orchestrator image's environment.
    dockerfile = (SPARK.parents[0] / "docker" / "Dockerfile.orchestrator").read_text()
    assert resource.conf["spark.pyspark.python"].startswith("/opt/marin/.venv/")
    assert "UV_PROJECT_ENVIRONMENT=/opt/marin/.venv" in dockerfile


def test_dataproc_config_is_a_dataproc_resource():
    config = yaml.safe_load((SPARK / "dataproc.yaml").read_text())
    resource = DataprocResource(**config)
    assert resource.cluster_config_dict["workerConfig"]["numInstances"] >= 2
