"""A code location for test_dead_run_worker: one tiny training run on $MARIN_TEST_STORAGE_ROOT, plus
a job to launch it through the daemon and the dead-worker sensor (`dagster dev -m marin_assets_tests.train.daemon_location`)."""

import os
from pathlib import Path

import dagster as dg

from marin_assets.defs.governance.run_health import dead_run_worker_sensor
from marin_assets.defs.train.definitions import build_defs
from marin_assets.train.runs import TrainingRuns
from marin_assets_tests.local_resources import local_resources

TINY = {"model": "tiny-0.2m", "mixture": "tiny", "budget": {"steps": 61}, "eval": {"interval": 30},
        "checkpoint": {"period": 10}, "log_period": 5, "resources": {"accelerator": "cpu", "memory_gib": 4}}
RUNS = TrainingRuns(runs={"tiny-daemon": TINY})
RUN_NAME = "tiny-daemon"
JOB = "tiny_training"



def _assets() -> list:
    train = build_defs(RUNS, baselines_dir=Path(__file__).parent / "baselines")  # not at module scope:
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))  # one Definitions
    return [train.get_assets_def("training_plan"), train.get_assets_def("training_run"), mixture]


ASSETS = _assets()

defs = dg.Definitions(
    assets=ASSETS,
    jobs=[dg.define_asset_job(JOB, selection=["training_run"])],
    sensors=[dead_run_worker_sensor],  # what fails the run of the worker the test kills
    resources=local_resources(os.environ.get("MARIN_TEST_STORAGE_ROOT", "/nonexistent")),
    executor=dg.in_process_executor,  # what the local environment runs with
)
