"""Fixtures shared by every stage's tests (keep this file small; stage fixtures live in their folders)."""

import pytest

from marin_assets.resources.spark import SparkResource

# Small shuffles: test data is tiny and the CI machine has 2 cores.
TEST_SPARK = SparkResource(
    master="local[2]",
    conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2", "spark.driver.memory": "1g"},
)


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
