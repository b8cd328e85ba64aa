"""Every run records which process executes it (pid + host, as run tags), however it was launched.

A daemon-launched run worker logs "Started process for run (pid: N)", but a run executed in the
process that launched it (`dagster asset materialize`, `marin materialize-all`, `dg.materialize`)
logs no pid: killed -9, it stayed STARTED and kept its pool slots forever. The storage resource, which
every asset of this project uses, tags its run when it is set up, so `dead_run_worker_sensor` can tell
a dead run from a live one for every run. Step processes of a multiprocess executor do not tag (they
end while the run goes on); the run worker that launched them logged its own pid.
"""

from __future__ import annotations

import multiprocessing
import os
import socket

import dagster as dg

PID_TAG = "marin/worker_pid"
HOST_TAG = "marin/worker_host"


def record_run_process(instance: dg.DagsterInstance | None, run: dg.DagsterRun | None) -> bool:
    """Tag `run` with this process' pid and host; False where there is nothing to tag."""
    if instance is None or run is None or multiprocessing.parent_process() is not None:
        return False
    instance.add_run_tags(run.run_id, {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()})
    return True


def recorded_process(run: dg.DagsterRun) -> tuple[int, str] | None:
    """(pid, host) a run recorded with `record_run_process`, or None."""
    tags = run.tags or {}
    if PID_TAG not in tags or HOST_TAG not in tags:
        return None
    try:
        return int(tags[PID_TAG]), tags[HOST_TAG]
    except ValueError:
        return None
