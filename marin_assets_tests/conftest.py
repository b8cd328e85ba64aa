"""Fixtures shared by every stage's tests (keep this file small; stage fixtures live in their folders)."""

import os
import shutil
import tempfile
from pathlib import Path

# Before anything starts gRPC (the Dataproc stub, the GCS emulator's clients): see resources/spark.py
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

import pytest  # noqa: E402

from marin_assets.resources.spark import SparkResource
from marin_assets_tests.file_durations import longest_files_first

# Small shuffles: test data is tiny and the CI machine has 2 cores.
TEST_SPARK = SparkResource(
    master="local[2]",
    conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2", "spark.driver.memory": "1g"},
)
LOCAL_INSTANCE_YAML = Path(__file__).resolve().parents[1] / "deployments" / "local" / "dagster.yaml"
_OWN_DIRS: list[str] = []


def pytest_configure(config):
    """Each pytest process (each xdist worker) gets its own DAGSTER_HOME and default storage root:
    scripts/env.sh points both into the repo's .marin/, which two workers (or a developer's
    `dagster dev`) would otherwise share."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    own = tempfile.mkdtemp(prefix=f"marin-tests-{worker}-")
    _OWN_DIRS.append(own)
    home = Path(own) / "dagster_home"
    home.mkdir()
    shutil.copy(LOCAL_INSTANCE_YAML, home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    os.environ["MARIN_STORAGE_ROOT"] = str(Path(own) / "storage")
    # One persistent JAX compilation cache per worker, for every trainer it starts (in-process
    # Dagster, `dagster dev` run workers, CLI subprocesses inherit it): a cold compile of the tiny
    # model's programs took ~40 s of a ~60 s run, a cached one ~8 s. Per worker, not shared: two
    # processes never write one entry at once. JAX's default threshold (programs compiling in 1 s+).
    os.environ.setdefault("MARIN_JAX_CACHE_DIR", str(Path(own) / "jax_cache"))


def pytest_unconfigure(config):
    for own in _OWN_DIRS:
        shutil.rmtree(own, ignore_errors=True)


def pytest_collection_modifyitems(session, config, items):
    """Longest files first: deterministic, so every xdist worker collects the same order, and with
    --no-loadscope-reorder the workers take the files in it."""
    rank = {nodeid: i for i, nodeid in enumerate(longest_files_first([item.nodeid for item in items]))}
    items.sort(key=lambda item: rank[item.nodeid])


@pytest.fixture(scope="session")
def spark_resource() -> SparkResource:
    return TEST_SPARK


@pytest.fixture(scope="session")
def spark(spark_resource):
    """ONE SparkSession for the whole test session (starting one costs ~10 s)."""
    session = spark_resource.get_session()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
