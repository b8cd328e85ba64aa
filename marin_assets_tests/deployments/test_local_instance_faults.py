"""The shipped local dagster.yaml detects dead run workers: run monitoring with a launcher that can
check a worker, slots freed after a run ends, bounded retries of dead-worker runs; and the launcher's
health check tells a live worker pid from a dead one (the daemon test kills a real one)."""

import subprocess
import sys
from pathlib import Path

import dagster as dg
import yaml
from dagster._core.events import EngineEventData
from dagster._core.launcher.base import WorkerStatus

from marin_assets.run_launcher import LocalRunLauncher

REPO = Path(__file__).resolve().parents[2]
LOCAL = REPO / "deployments" / "local" / "dagster.yaml"
PRODUCTION = REPO / "deployments" / "production" / "dagster.yaml"


def test_local_and_production_instances_fail_dead_workers_free_slots_and_retry(tmp_path):
    (tmp_path / "dagster.yaml").write_text(LOCAL.read_text())
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert isinstance(instance.run_launcher, LocalRunLauncher)
        assert instance.run_launcher.supports_check_run_worker_health
        assert instance.run_monitoring_enabled
        settings = instance.run_monitoring_settings
        assert settings["poll_interval_seconds"] <= 10 and settings["free_slots_after_run_end_seconds"] <= 60
        assert instance.run_retries_enabled and instance.run_retries_max_retries >= 1
        assert not instance.run_retries_retry_on_asset_or_op_failure  # dead workers only; assets fail the same twice
    production = yaml.safe_load(PRODUCTION.read_text())
    assert production["run_monitoring"]["enabled"] and production["run_monitoring"]["free_slots_after_run_end_seconds"]
    assert production["run_retries"]["enabled"] and production["run_retries"]["max_retries"] >= 1


def test_health_check_follows_the_run_workers_pid(tmp_path):
    (tmp_path / "dagster.yaml").write_text(LOCAL.read_text())
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        run = instance.create_run_for_job(dg.GraphDefinition("g").to_job(), run_id=None)
        assert instance.run_launcher.check_run_worker_health(run).status == WorkerStatus.RUNNING  # not started
        worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        instance.report_engine_event(f"Started process for run (pid: {worker.pid}).", run,
                                     EngineEventData.in_process(worker.pid))
        assert instance.run_launcher.check_run_worker_health(run).status == WorkerStatus.RUNNING
        worker.kill()
        worker.wait()
        health = instance.run_launcher.check_run_worker_health(run)
        assert health.status == WorkerStatus.FAILED and f"pid {worker.pid} is gone" in health.msg
