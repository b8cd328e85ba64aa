"""One table of environments; picking one is a lookup, not an if-chain.

local (default): SQLite instance, local files, Spark local[2], JAX on CPU, in-process execution.
production: Postgres instance (deployments/production/dagster.yaml), gs:// storage, Spark on a
cluster (cleaning on Dataproc, the rest on Kubernetes), TPU pods on Kubernetes, one Kubernetes job
per step. MARIN_SPARK_BACKEND picks where cleaning runs (resources/cleaning_runners.py) in either.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from marin_assets.resources.cleaning_runners import CleaningRunnerResource, backend_from_env
from marin_assets.resources.dataproc_runner import DataprocBackend
from marin_assets.resources.spark import SparkResource
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.train.k8s.resource import TpuPodLauncher

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_LOCAL_ROOT = REPO_ROOT / ".marin" / "storage"


@dataclass(frozen=True)
class Environment:
    resources: Callable[[], dict]
    executor: Callable[[], dg.ExecutorDefinition]


def _local_resources() -> dict:
    spark = SparkResource(master=os.environ.get("MARIN_SPARK_MASTER", "local[2]"))
    return {
        "storage": StorageResource(root_uri=os.environ.get("MARIN_STORAGE_ROOT", str(DEFAULT_LOCAL_ROOT))),
        "spark": spark,
        "cleaning_runner": CleaningRunnerResource(backend=backend_from_env("in_session"), spark=spark),
        # TPU runs need a cluster and gs:// storage; locally the launcher refuses them with that message.
        "tpu_launcher": TpuPodLauncher(
            namespace="marin-train", image="marin-tpu-train:unbuilt", pipes_bucket="unset", in_cluster=False
        ),
    }


def _production_resources() -> dict:
    # Spark on Kubernetes (resources/spark_kubernetes.py): executors in MARIN_SPARK_NAMESPACE, driver = step pod
    spark = SparkResource(
        master=os.environ.get("MARIN_SPARK_MASTER", "k8s://https://kubernetes.default.svc"),
        k8s_namespace=os.environ.get("MARIN_SPARK_NAMESPACE", "marin"),
        k8s_executor_image=dg.EnvVar("MARIN_SPARK_EXECUTOR_IMAGE"),
        k8s_service_account=os.environ.get("MARIN_SPARK_SERVICE_ACCOUNT", "marin-dagster"),
    )
    return {
        # Required: production never silently falls back to a local folder.
        "storage": StorageResource(root_uri=dg.EnvVar("MARIN_STORAGE_ROOT")),
        "spark": spark,
        # Cleaning on the Dataproc cluster of deployments/spark/dataproc.yaml; Pipes messages via GCS
        "cleaning_runner": CleaningRunnerResource(
            backend=backend_from_env("dataproc"), spark=spark,
            dataproc=DataprocBackend(pipes_bucket=os.environ.get("MARIN_PIPES_BUCKET", "")),
        ),
        "tpu_launcher": TpuPodLauncher(
            namespace=dg.EnvVar("MARIN_TPU_NAMESPACE"),
            image=dg.EnvVar("MARIN_TPU_TRAIN_IMAGE"),
            service_account="marin-train",
            pipes_bucket=dg.EnvVar("MARIN_PIPES_BUCKET"),
        ),
    }


def _k8s_executor() -> dg.ExecutorDefinition:
    from dagster_k8s import k8s_job_executor

    # Step retries on, said rather than left to the default: a preempted trainer (local, or a whole TPU
    # slice) raises dg.RetryRequested (train/launchers.py) and its step pod is started again, resuming
    # from the run folder's last checkpoint complete on all hosts. Run retries cover a lost run pod.
    return k8s_job_executor.configured({"retries": {"enabled": {}}}, name="k8s_job_executor")


ENVIRONMENTS: dict[str, Environment] = {
    # In-process: a CLI materialization costs ~4 s instead of ~14 s with subprocess-per-step.
    "local": Environment(resources=_local_resources, executor=lambda: dg.in_process_executor),
    "production": Environment(resources=_production_resources, executor=_k8s_executor),
}


def current_environment() -> str:
    name = os.environ.get("MARIN_ENV", "local")
    if name not in ENVIRONMENTS:
        raise ValueError(f"MARIN_ENV={name!r} is not one of {sorted(ENVIRONMENTS)}")
    return name


def resources_for(name: str | None = None) -> dict:
    return ENVIRONMENTS[name or current_environment()].resources()


def executor_for(name: str | None = None) -> dg.ExecutorDefinition:
    return ENVIRONMENTS[name or current_environment()].executor()
