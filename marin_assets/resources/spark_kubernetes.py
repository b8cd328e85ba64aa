"""Spark on Kubernetes in client mode: the Dagster step pod is the driver, executors are pods.

What the cluster needs, as code (the production environment builds its SparkResource from this):
executors run an image holding Spark 4.3's Kubernetes entrypoint and this project's locked Python
environment (spark.pyspark.python), in a namespace, under a service account allowed to create pods;
they call the driver back on the step pod's IP (the POD_IP env var the Helm chart sets), on fixed
ports so a NetworkPolicy can allow them.
"""

from __future__ import annotations

from dataclasses import dataclass

DRIVER_PORT = 7078
BLOCK_MANAGER_PORT = 7079
VENV_PYTHON = "/opt/marin/.venv/bin/python"  # UV_PROJECT_ENVIRONMENT of deployments/docker images


@dataclass(frozen=True)
class KubernetesSpark:
    namespace: str
    executor_image: str
    service_account: str
    executor_instances: int = 8
    executor_cores: int = 4
    executor_memory: str = "16g"
    driver_memory: str = "8g"
    shuffle_partitions: int = 256
    python: str = VENV_PYTHON

    def conf(self, driver_host: str) -> dict[str, str]:
        """spark.* settings for a driver whose pod IP is driver_host."""
        if not driver_host:
            raise ValueError("Spark on Kubernetes needs the driver pod's IP (env POD_IP from the Helm chart's fieldRef)")
        return {
            "spark.submit.deployMode": "client",
            "spark.kubernetes.namespace": self.namespace,
            "spark.kubernetes.container.image": self.executor_image,
            "spark.kubernetes.container.image.pullPolicy": "IfNotPresent",
            "spark.kubernetes.authenticate.driver.serviceAccountName": self.service_account,
            "spark.kubernetes.executor.podNamePrefix": "marin-spark",
            "spark.pyspark.python": self.python,
            "spark.pyspark.driver.python": self.python,
            "spark.driver.host": driver_host,
            "spark.driver.bindAddress": "0.0.0.0",
            "spark.driver.port": str(DRIVER_PORT),
            "spark.blockManager.port": str(BLOCK_MANAGER_PORT),
            "spark.executor.instances": str(self.executor_instances),
            "spark.executor.cores": str(self.executor_cores),
            "spark.executor.memory": self.executor_memory,
            "spark.driver.memory": self.driver_memory,
            "spark.sql.shuffle.partitions": str(self.shuffle_partitions),
            "spark.dynamicAllocation.enabled": "false",
            # gs:// through the Cloud Storage connector (baked into the executor image), workload identity
            "spark.hadoop.fs.gs.impl": "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFileSystem",
            "spark.hadoop.fs.AbstractFileSystem.gs.impl": "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFS",
            "spark.hadoop.google.cloud.auth.type": "APPLICATION_DEFAULT",
        }
