"""The shipped local dagster.yaml detects dead run workers: run monitoring, slots freed after a run
ends, bounded retries of dead-worker runs; and dead_run_worker_sensor tells a live worker pid from a
dead one and fails only the dead one's run (the daemon test kills a real worker)."""

import subprocess
import sys
from pathlib import Path

import dagster as dg
import yaml
from dagster._core.events import EngineEventData

from marin_assets.defs.governance.run_health import dead_run_worker_sensor, run_worker_pid

REPO = Path(__file__).resolve().parents[2]
LOCAL = REPO / "deployments" / "local" / "dagster.yaml"
PRODUCTION = REPO / "deployments" / "production" / "dagster.yaml"


def test_local_and_production_instances_fail_dead_workers_free_slots_and_retry(tmp_path):
    (tmp_path / "dagster.yaml").write_text(LOCAL.read_text())
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert type(instance.run_launcher) is dg.DefaultRunLauncher  # workers are local processes
        assert instance.run_monitoring_enabled
        settings = instance.run_monitoring_settings
        assert settings["poll_interval_seconds"] <= 10 and settings["free_slots_after_run_end_seconds"] <= 60
        assert instance.run_retries_enabled and instance.run_retries_max_retries >= 1
        assert not instance.run_retries_retry_on_asset_or_op_failure  # dead workers only; assets fail the same twice
    production = yaml.safe_load(PRODUCTION.read_text())
    assert production["run_monitoring"]["enabled"] and production["run_monitoring"]["free_slots_after_run_end_seconds"]
    assert production["run_retries"]["enabled"] and production["run_retries"]["max_retries"] >= 1


def started_run(instance, worker_pid: int | None):
    run = instance.create_run_for_job(dg.GraphDefinition("g").to_job(), run_id=None,
                                      status=dg.DagsterRunStatus.STARTED)
    if worker_pid is not None:
        instance.report_engine_event(f"Started process for run (pid: {worker_pid}).", run,
                                     EngineEventData.in_process(worker_pid))
    return run


def evaluate(instance) -> str:
    return dead_run_worker_sensor(dg.build_sensor_context(instance=instance)).skip_message


def test_sensor_fails_the_run_of_a_dead_worker_only(tmp_path):
    (tmp_path / "dagster.yaml").write_text(LOCAL.read_text())
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        in_process = started_run(instance, None)  # e.g. a CLI run: no worker to check
        live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        dead = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        live_run, dead_run = started_run(instance, live.pid), started_run(instance, dead.pid)
        assert run_worker_pid(instance, dead_run.run_id) == dead.pid
        assert evaluate(instance) == "every started run's worker is alive"
        dead.kill()
        dead.wait()
        assert evaluate(instance) == "marked 1 run(s) failed whose worker had died"
        assert instance.get_run_by_id(dead_run.run_id).status == dg.DagsterRunStatus.FAILURE
        failure = [e for e in instance.all_logs(dead_run.run_id) if e.dagster_event and e.dagster_event.is_run_failure]
        assert f"pid {dead.pid}" in failure[0].dagster_event.message and "is gone" in failure[0].dagster_event.message
        for run in (in_process, live_run):
            assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.STARTED
        assert evaluate(instance) == "every started run's worker is alive"  # reported once
        live.kill()
        live.wait()


def test_sensor_leaves_runs_to_a_launcher_that_checks_its_workers(tmp_path):
    config = LOCAL.read_text().replace("  module: dagster\n  class: DefaultRunLauncher",
                                       "  module: dagster._core.test_utils\n  class: MockedRunLauncher")
    assert config != LOCAL.read_text()
    (tmp_path / "dagster.yaml").write_text(config)
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert "not local processes" in evaluate(instance)
