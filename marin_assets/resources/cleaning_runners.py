"""Where cleaned_documents' Spark job runs: a registry of cleaning runners, picked by resource config.

    runner = cleaning_runner.runner()            # CLEANING_RUNNERS[backend]
    metadata = runner.run(context, task)         # fills task.out_dir (the asset's staging folder)

in_session: this process's SparkSession (SparkResource: local[*], a standalone cluster, Kubernetes).
dataproc:   a PySpark job on the Dataproc cluster of deployments/spark/dataproc.yaml, through
            dagster_gcp's PipesDataprocJobClient (resources/dataproc_runner.py).
Both write the folder with cleaned_output.write_cleaned; the asset reads it back and commits it.
A new backend is one runner class plus one entry in CLEANING_RUNNERS.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Protocol

import dagster as dg
from pydantic import Field, field_validator

from marin_assets.data.clean.cleaned_output import CleaningJob, write_cleaned
from marin_assets.resources.dataproc_runner import DataprocBackend, DataprocRunner
from marin_assets.resources.spark import SparkResource
from marin_assets.resources.spark_progress import spark_progress

BACKEND_ENV = "MARIN_SPARK_BACKEND"


class CleaningRunner(Protocol):
    def run(self, context: dg.AssetExecutionContext, task: CleaningJob) -> dict:
        """Write the cleaned folder of `task` into task.out_dir; return metadata about the run."""


class InSessionRunner:
    def __init__(self, spark: SparkResource):
        self.spark = spark

    def run(self, context: dg.AssetExecutionContext, task: CleaningJob) -> dict:
        session = self.spark.get_session(context.log)
        with spark_progress(session, context.log):  # stage progress in the run log while Spark works
            write_cleaned(session, task)
        return {"spark_backend": "in_session", "spark_master": session.sparkContext.master}


CLEANING_RUNNERS: dict[str, Callable[[CleaningRunnerResource], CleaningRunner]] = {
    "in_session": lambda resource: InSessionRunner(resource.spark),
    "dataproc": lambda resource: DataprocRunner(resource.dataproc),
}


class CleaningRunnerResource(dg.ConfigurableResource):
    backend: str = Field(default="in_session", description=f"one of the cleaning runners (env {BACKEND_ENV})")
    spark: SparkResource = Field(description="the session of the in_session backend")
    dataproc: DataprocBackend = Field(default_factory=DataprocBackend, description="the dataproc backend's settings")

    @field_validator("backend")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in CLEANING_RUNNERS:
            raise ValueError(f"unknown Spark backend {value!r} ({BACKEND_ENV}); known: {sorted(CLEANING_RUNNERS)}")
        return value

    def runner(self) -> CleaningRunner:
        return CLEANING_RUNNERS[self.backend](self)


def backend_from_env(default: str) -> str:
    return os.environ.get(BACKEND_ENV, default)
