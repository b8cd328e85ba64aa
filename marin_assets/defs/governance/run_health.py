"""A run whose process died is marked failed, its pool slots are freed, and it is retried where its launcher retries.

Dagster's run monitoring only notices a dead run worker if the run launcher can check it, and the
local `DefaultRunLauncher` cannot; a run executed in the process that launched it (`dagster asset
materialize`, `marin materialize-all`) has no launcher at all. Killed -9, either stayed STARTED (and
kept its `training` pool slot) forever. Every run says which process runs it: a daemon-launched worker
logs "Started process for run (pid: N)", and every run's storage resource tags it with its pid and
host (resources/run_liveness.py). This sensor, on public APIs only, reports a STARTED run of this
host failed once that process is gone and frees the run's concurrency slots at once. The instance
then retries it (`run_retries`) where it can launch it again (daemon-launched runs; a CLI run has no
origin to relaunch, and Dagster says so in the run's log). It acts only where run processes are
processes of this machine (the default launcher); production's K8s launcher checks each run's Job itself.
"""

from __future__ import annotations

import socket

import dagster as dg

from marin_assets.core.processes import pid_alive
from marin_assets.resources.run_liveness import recorded_process

WORKER_STARTED = "Started process for run"
CHECK_INTERVAL_S = 5


def run_worker_pid(instance: dg.DagsterInstance, run_id: str) -> int | None:
    """The pid of the process running the run on this host: its newest worker's (daemon-launched), else
    the one the run tagged itself with (any launcher); None before either is known or on another host."""
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT).records
    for record in reversed(records):
        event = record.event_log_entry.dagster_event
        if event is None or WORKER_STARTED not in (event.message or ""):
            continue
        pid = getattr(event.event_specific_data, "metadata", {}).get("pid")
        if pid is not None:
            return int(pid.value)
    run = instance.get_run_by_id(run_id)
    recorded = recorded_process(run) if run is not None else None
    if recorded is None or recorded[1] != socket.gethostname():
        return None
    return recorded[0]


def dead_worker_runs(instance: dg.DagsterInstance) -> list[tuple[dg.DagsterRun, int]]:
    """STARTED runs whose process has gone, with that process' pid."""
    dead = []
    for run in instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])):
        pid = run_worker_pid(instance, run.run_id)
        if pid is not None and not pid_alive(pid):
            dead.append((run, pid))
    return dead


def fail_dead_worker_runs(instance: dg.DagsterInstance) -> list[str]:
    """Report every dead-worker run failed and free its concurrency slots; the ids of the runs reported."""
    reported = []
    for run, pid in dead_worker_runs(instance):
        instance.report_run_failed(run, f"run process pid {pid} on {socket.gethostname()} is gone (killed or "
                                        "crashed); marked failed by dead_run_worker_sensor")
        # at once: a run waiting for the pool should not wait out free_slots_after_run_end_seconds too
        instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
        reported.append(run.run_id)
    return reported


@dg.sensor(minimum_interval_seconds=CHECK_INTERVAL_S, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Marks a run failed when the local process running it has died (kill -9, OOM), "
                       "however it was launched, frees its pool slots and lets run_retries retry it.")
def dead_run_worker_sensor(context: dg.SensorEvaluationContext):
    if type(context.instance.run_launcher) is not dg.DefaultRunLauncher:
        return dg.SkipReason("run workers are not local processes here; the run launcher checks them")
    reported = fail_dead_worker_runs(context.instance)
    if not reported:
        return dg.SkipReason("every started run's worker is alive")
    context.log.warning(f"marked failed (dead run worker): {', '.join(reported)}")
    return dg.SkipReason(f"marked {len(reported)} run(s) failed whose worker had died")
