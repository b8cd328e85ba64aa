"""The local instance's run launcher: Dagster's default one, plus a run-worker health check.

Dagster's run monitoring only notices a dead run worker if the launcher can say whether its worker is
alive; `DefaultRunLauncher` cannot, so a kill -9'd worker left its run STARTED (and its pool slot
taken) forever. Every run worker logs "Started process for run (pid: N)"; this launcher reports the
worker FAILED once that pid is gone, and the daemon then marks the run failed, frees its pool slots
(`free_slots_after_run_end_seconds`) and retries it (`run_retries`). Workers are processes on this
machine (spawned by the local code server), so a pid is a sound identity here; production uses the
K8s launcher, which checks the run's Kubernetes Job instead.
"""

from __future__ import annotations

from dagster import DagsterEventType, DefaultRunLauncher
from dagster._core.launcher.base import CheckRunHealthResult, WorkerStatus

from marin_assets.train.lease import pid_alive


def run_worker_pid(instance, run_id: str) -> int | None:
    """The pid the run's newest worker reported, or None before it started."""
    records = instance.get_records_for_run(run_id, of_type=DagsterEventType.ENGINE_EVENT).records
    for record in reversed(records):
        entry = record.event_log_entry
        data = entry.dagster_event.event_specific_data if entry.dagster_event else None
        pid = getattr(data, "metadata", {}).get("pid") if data is not None else None
        if pid is not None and "Started process for run" in (entry.dagster_event.message or ""):
            return int(pid.value)
    return None


class LocalRunLauncher(DefaultRunLauncher):
    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run) -> CheckRunHealthResult:
        pid = run_worker_pid(self._instance, run.run_id)
        if pid is None:
            return CheckRunHealthResult(WorkerStatus.RUNNING, "run worker not started yet")
        if pid_alive(pid):
            return CheckRunHealthResult(WorkerStatus.RUNNING, f"run worker pid {pid} is alive")
        return CheckRunHealthResult(WorkerStatus.FAILED, f"run worker pid {pid} is gone (killed or crashed)")
