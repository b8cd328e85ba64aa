"""A run whose local worker died is marked failed, so its pool slots are freed and it is retried.

Dagster's run monitoring only notices a dead run worker if the run launcher can check it, and the
local `DefaultRunLauncher` cannot: a kill -9'd worker left its run STARTED (and its `training` pool
slot taken) forever. Every run worker logs "Started process for run (pid: N)"; this sensor, on
public APIs only, reports a STARTED run failed once that pid is gone. The instance then frees the
run's slots (`free_slots_after_run_end_seconds`) and retries it (`run_retries`), as it would for a
worker that Dagster itself saw die. It acts only where workers are processes of this machine (the
default launcher); production's K8s launcher checks each run's Kubernetes Job itself.
"""

from __future__ import annotations

import dagster as dg

from marin_assets.core.processes import pid_alive

WORKER_STARTED = "Started process for run"
CHECK_INTERVAL_S = 5


def run_worker_pid(instance: dg.DagsterInstance, run_id: str) -> int | None:
    """The pid the run's newest worker reported, or None before it started (or for in-process runs)."""
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT).records
    for record in reversed(records):
        event = record.event_log_entry.dagster_event
        if event is None or WORKER_STARTED not in (event.message or ""):
            continue
        pid = getattr(event.event_specific_data, "metadata", {}).get("pid")
        if pid is not None:
            return int(pid.value)
    return None


def dead_worker_runs(instance: dg.DagsterInstance) -> list[tuple[dg.DagsterRun, int]]:
    """STARTED runs whose worker process has gone, with that worker's pid."""
    dead = []
    for run in instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])):
        pid = run_worker_pid(instance, run.run_id)
        if pid is not None and not pid_alive(pid):
            dead.append((run, pid))
    return dead


def fail_dead_worker_runs(instance: dg.DagsterInstance) -> list[str]:
    """Report every dead-worker run failed; the ids of the runs reported."""
    reported = []
    for run, pid in dead_worker_runs(instance):
        instance.report_run_failed(run, f"run worker pid {pid} is gone (killed or crashed); marked failed by "
                                        "dead_run_worker_sensor")
        reported.append(run.run_id)
    return reported


@dg.sensor(minimum_interval_seconds=CHECK_INTERVAL_S, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Marks a run failed when its local run worker process has died (kill -9, OOM), "
                       "so its pool slots are freed and run_retries retries it.")
def dead_run_worker_sensor(context: dg.SensorEvaluationContext):
    if type(context.instance.run_launcher) is not dg.DefaultRunLauncher:
        return dg.SkipReason("run workers are not local processes here; the run launcher checks them")
    reported = fail_dead_worker_runs(context.instance)
    if not reported:
        return dg.SkipReason("every started run's worker is alive")
    context.log.warning(f"marked failed (dead run worker): {', '.join(reported)}")
    return dg.SkipReason(f"marked {len(reported)} run(s) failed whose worker had died")
