"""Resources for tests that materialize assets directly: the local environment's, on a tmp root."""

from marin_assets.resources import resources_for
from marin_assets.resources.storage_resource import StorageResource


def local_resources(root_uri: str, **extra) -> dict:
    """storage on `root_uri`, plus every other resource the local environment binds (tpu_launcher, ...).
    Not Spark: neither the session nor the cleaning runner on it (tests that clean add spark_resources)."""
    resources = {k: v for k, v in resources_for("local").items() if k not in ("storage", "spark", "cleaning_runner")}
    return {**resources, "storage": StorageResource(root_uri=str(root_uri)), **extra}


def spark_resources(spark) -> dict:
    """`spark` and the cleaning runner on it (the in-session backend), for tests that clean."""
    from marin_assets.resources.cleaning_runners import CleaningRunnerResource

    return {"spark": spark, "cleaning_runner": CleaningRunnerResource(spark=spark)}
