"""Spark as configuration: the same job runs on local[*] here and on a cluster in production."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import dagster as dg
from pydantic import Field


class SparkResource(dg.ConfigurableResource):
    master: str = Field(default="local[2]", description="Spark master URL (local[N], spark://, k8s://, yarn)")
    app_name: str = "marin_assets"
    conf: dict[str, str] = Field(default_factory=dict, description="Extra spark.* settings")

    def get_session(self, log: Any = None):
        """The Spark session; with a logger (context.log), one line before and one after start-up,
        since starting the JVM takes tens of seconds on a small machine and shows nothing else."""
        # Spark's Python workers must run this environment's interpreter (else: PYTHON_VERSION_MISMATCH).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        if self.master.startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        from pyspark.sql import SparkSession

        builder = SparkSession.builder.master(self.master).appName(self.app_name)
        for key, value in {**LOCAL_DEFAULTS, **self.conf}.items():
            builder = builder.config(key, value)
        started = time.monotonic()
        if log is not None:
            log.info(f"starting Spark session (master {self.master})")
        session = builder.getOrCreate()
        if log is not None:
            log.info(f"Spark {session.version} session ready in {time.monotonic() - started:.1f} s "
                     f"(master {session.sparkContext.master}, {session.sparkContext.defaultParallelism} cores)")
        return session


# Sized for a small machine; production overrides through `conf`.
LOCAL_DEFAULTS = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.driver.memory": "2g",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}
