"""A real Spark standalone cluster for the tests: 1 master + 2 workers (1 core, 1 GB each), own JVMs."""

from __future__ import annotations

import pytest

from marin_assets.resources.spark_cluster import StandaloneCluster, free_port


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory):
    # A free port, not 7077: a developer's own cluster (scripts/spark_cluster.sh) may hold that one.
    cluster = StandaloneCluster(tmp_path_factory.mktemp("spark-cluster"), port=free_port(), workers=2,
                                worker_cores=1, worker_memory="1g").start(timeout=240)  # fmt: skip
    yield cluster
    cluster.stop()
