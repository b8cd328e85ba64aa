"""Spark as configuration: the same job runs on local[*] here and on a cluster in production."""

from __future__ import annotations

import os
import re
import sys
import time
from typing import Any

import dagster as dg
from pydantic import Field

from marin_assets.resources.spark_kubernetes import KubernetesSpark

# gRPC's fork handlers can crash a child between fork and exec while gRPC's poller runs (grpc/grpc#43055,
# grpcio >= 1.81: "epoll_wait ... Bad file descriptor"); the JVM launch then fails with JAVA_GATEWAY_EXITED.
# Dagster, the Dataproc and GCS clients run gRPC in the processes that start Spark, and that child always
# execs, so it needs no fork support. Read when gRPC initialises: set before any channel or server starts.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

_LOOPBACK_MASTER = re.compile(r"spark://(127\.0\.0\.1|localhost)(:\d+)?$")


class SparkResource(dg.ConfigurableResource):
    master: str = Field(default="local[2]", description="Spark master URL (local[N], spark://, k8s://, yarn)")
    app_name: str = "marin_assets"
    conf: dict[str, str] = Field(default_factory=dict, description="Extra spark.* settings (win over the rest)")
    # k8s:// masters (resources/spark_kubernetes.py): where and as what the executor pods run
    k8s_namespace: str | None = None
    k8s_executor_image: str | None = None
    k8s_service_account: str | None = None
    driver_host_env: str = Field(default="POD_IP", description="env var with the address executors reach the driver on")

    def session_conf(self) -> dict[str, str]:
        """Every spark.* setting the session starts with: defaults, the master's needs, then `conf`."""
        conf = dict(LOCAL_DEFAULTS)
        if self.master.startswith("local"):
            conf.update(LOCAL_TUNING)
        if self.master.startswith("k8s://"):
            missing = [f for f in ("k8s_namespace", "k8s_executor_image", "k8s_service_account") if not getattr(self, f)]
            if missing:
                raise ValueError(f"Spark master {self.master} needs {missing} set on the spark resource")
            k8s = KubernetesSpark(self.k8s_namespace, self.k8s_executor_image, self.k8s_service_account)
            conf.update(k8s.conf(os.environ.get(self.driver_host_env, "")))
        conf.update(self.conf)
        return conf

    def on_this_machine(self) -> bool:
        """local[N], or a standalone cluster on loopback: driver, executors and Python workers share these cores."""
        return self.master.startswith("local") or bool(_LOOPBACK_MASTER.match(self.master))

    def get_session(self, log: Any = None):
        """The Spark session; with a logger (context.log), one line before and one after start-up,
        since starting the JVM takes tens of seconds on a small machine and shows nothing else."""
        # Spark's Python workers must run this environment's interpreter (else: PYTHON_VERSION_MISMATCH).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        if self.on_this_machine():
            # driver and executors on this machine: talk over loopback, never the LAN address
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        from pyspark.sql import SparkSession

        builder = SparkSession.builder.master(self.master).appName(self.app_name)
        for key, value in self.session_conf().items():
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
    # Batches to and from the Python workers: 10,000 records of 20 KB HTML would be 200 MB each
    "spark.sql.execution.arrow.maxBytesPerBatch": str(32 * 2**20),
}

# local[N]: the driver JVM is the only executor and shares the few cores with the Python workers.
# - A C1-only JIT: the cleaning's JVM work is short, generated code changes with every query, and the C2
#   compiler cost 13-21 s of CPU a text round of the Debian benchmark (local[2]). Its code cache is
#   kept at the tiered JIT's 240 MB: C1 alone defaults to 48 MB, which the benchmark's driver filled
#   after six cleaning rounds, and a full cache stops the JIT (later queries run interpreted).
# - The parallel collector: G1's concurrent threads took 2-3 s of CPU a round beside the workers.
# - No compression of shuffle files or of the cached table: they never leave this machine, and lz4 over
#   every text twice (the id and content shuffles) cost 3-5 s of CPU a round.
# - Python workers that import pyspark from the installed package, with its bytecode, not from the zip
#   Spark puts first on their path (compiled from source in each process): core/spark_daemon.py.
# Measured on 2026-12-06 (README, Scale). Clusters keep the defaults (their executors run longer, their
# shuffles cross the network, their Python may get the project as files). `conf` wins over each of these.
LOCAL_TUNING = {
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseParallelGC",
    "spark.shuffle.compress": "false",
    "spark.sql.inMemoryColumnarStorage.compressed": "false",
    "spark.python.daemon.module": "marin_assets.core.spark_daemon",
}
