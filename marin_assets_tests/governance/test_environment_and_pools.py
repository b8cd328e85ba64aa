"""Provenance capture of Spark and JAX, and the local instance's training pool limit."""

import shutil
from pathlib import Path

import dagster as dg
import pytest

from marin_assets.core.environment import environment_snapshot, jax_devices, spark_version
from marin_assets.lineage.provenance import build_manifest, manifest_metadata

REPO = Path(__file__).resolve().parents[2]


def test_spark_version_and_jax_devices_are_recorded_once_imported():
    import jax
    import pyspark

    assert spark_version() == pyspark.__version__  # no active session: the imported pyspark
    assert jax_devices() == [str(d) for d in jax.devices()] and jax_devices()
    manifest = build_manifest(
        asset="a", partition=None, recipe={}, code_version="c", inputs={}, output_uri="/x", output_hash="h",
    )
    assert manifest["environment"]["spark"] == pyspark.__version__
    assert manifest["devices"] == jax_devices()  # defaults to this process's JAX devices
    assert manifest_metadata(manifest)["provenance"]["spark_version"] == pyspark.__version__
    assert build_manifest(asset="a", partition=None, recipe={}, code_version="c", inputs={}, output_uri="/x",
                          output_hash="h", devices=["tpu v5e x16"])["devices"] == ["tpu v5e x16"]
    assert set(environment_snapshot()) >= {"git_commit", "git_dirty", "uv_lock_sha256", "python", "libraries"}


@pytest.mark.slow
def test_local_instance_limits_the_training_pool_to_one(tmp_path):
    shutil.copy(REPO / "deployments" / "local" / "dagster.yaml", tmp_path / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        config = instance.get_concurrency_config()
        assert config.pool_config.default_pool_limit == 1
        assert config.run_queue_config.max_concurrent_runs == 2
        assert instance.global_op_concurrency_default_limit == 1  # what a new "training" pool gets
