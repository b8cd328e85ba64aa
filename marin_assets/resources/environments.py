"""One table of environments; picking one is a lookup, not an if-chain."""

from __future__ import annotations

import os
from collections.abc import Callable

import dagster as dg
from pathlib import Path

from marin_assets.resources.spark import SparkResource
from marin_assets.resources.storage import StorageResource

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_LOCAL_ROOT = REPO_ROOT / ".marin" / "storage"


def _local() -> dict:
    return {
        "storage": StorageResource(root_uri=os.environ.get("MARIN_STORAGE_ROOT", str(DEFAULT_LOCAL_ROOT))),
        "spark": SparkResource(master=os.environ.get("MARIN_SPARK_MASTER", "local[2]")),
    }


def _production() -> dict:
    return {
        # Required: production never silently falls back to a local folder.
        "storage": StorageResource(root_uri=dg.EnvVar("MARIN_STORAGE_ROOT")),
        "spark": SparkResource(
            master=os.environ.get("MARIN_SPARK_MASTER", "k8s://https://kubernetes.default.svc"),
            conf={
                "spark.sql.shuffle.partitions": "200",
                "spark.driver.memory": "8g",
                "spark.executor.memory": "16g",
                "spark.hadoop.fs.gs.impl": "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFileSystem",
            },
        ),
    }




ENVIRONMENTS: dict[str, Callable[[], dict]] = {"local": _local, "production": _production}


def current_environment() -> str:
    name = os.environ.get("MARIN_ENV", "local")
    if name not in ENVIRONMENTS:
        raise ValueError(f"MARIN_ENV={name!r} is not one of {sorted(ENVIRONMENTS)}")
    return name


def resources_for(name: str | None = None) -> dict:
    return ENVIRONMENTS[name or current_environment()]()
