"""Spark stage progress in the run's log while a job runs, so long cleaning shows movement in the UI.

    with spark_progress(spark, context.log):
        df.write.parquet(...)

A daemon thread polls `sparkContext.statusTracker()` (it works with `spark.ui.enabled=false`) and
logs one line per active stage whose progress changed since the last poll, e.g.
"spark stage 3 (parquet at NativeMethodAccessorImpl.java:0): 12/40 tasks done, 2 running (job 2: stage 2 of 3)",
and one "... finished: 40/40 tasks" line when a stage it reported leaves the active set.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol


class InfoLogger(Protocol):
    def info(self, msg: str, *args: Any, **kwargs: Any) -> Any: ...


@dataclass(frozen=True)
class StageProgress:
    stage_id: int
    name: str
    done: int
    running: int
    failed: int
    total: int
    job: str = ""  # "job 2: stage 2 of 3" when the stage belongs to an active job

    def line(self) -> str:
        failed = f", {self.failed} failed" if self.failed else ""
        job = f" ({self.job})" if self.job else ""
        return (f"spark stage {self.stage_id} ({self.name}): {self.done}/{self.total} tasks done, "
                f"{self.running} running{failed}{job}")

    def finished_line(self) -> str:
        failed = f", {self.failed} failed" if self.failed else ""
        return f"spark stage {self.stage_id} ({self.name}) finished: {self.done}/{self.total} tasks{failed}"


def _jobs_by_stage(tracker) -> dict[int, str]:
    """Which active job each stage belongs to, and its place among the job's stages."""
    out: dict[int, str] = {}
    for job_id in tracker.getActiveJobsIds():
        info = tracker.getJobInfo(job_id)
        if info is None:
            continue
        stages = sorted(info.stageIds)
        for i, stage_id in enumerate(stages, 1):
            out[stage_id] = f"job {job_id}: stage {i} of {len(stages)}"
    return out


def active_stages(spark) -> list[StageProgress]:
    """Progress of every stage Spark is running now (empty between jobs)."""
    tracker = spark.sparkContext.statusTracker()
    jobs = _jobs_by_stage(tracker)
    out = []
    for stage_id in sorted(tracker.getActiveStageIds()):
        info = tracker.getStageInfo(stage_id)
        if info is None:  # the stage finished between the two calls
            continue
        out.append(StageProgress(stage_id, info.name, info.numCompletedTasks, info.numActiveTasks,
                                 info.numFailedTasks, info.numTasks, jobs.get(stage_id, "")))
    return out


def stage_now(spark, stage: StageProgress) -> StageProgress:
    """A stage's latest counts (Spark keeps finished stages' info for a while); the last seen if gone."""
    info = spark.sparkContext.statusTracker().getStageInfo(stage.stage_id)
    if info is None:
        return stage
    return StageProgress(stage.stage_id, info.name, info.numCompletedTasks, info.numActiveTasks,
                         info.numFailedTasks, info.numTasks, stage.job)


class _Poller:
    def __init__(self, spark, log: InfoLogger, interval_s: float):
        self.spark, self.log, self.interval_s = spark, log, interval_s
        self.stop = threading.Event()
        self.last: dict[int, StageProgress] = {}
        self.thread = threading.Thread(target=self.run, name="spark-progress", daemon=True)

    def poll(self) -> None:
        active = active_stages(self.spark)
        for stage in active:
            if self.last.get(stage.stage_id) != stage:  # only changes: a stuck stage does not flood the log
                self.log.info(stage.line())
                self.last[stage.stage_id] = stage
        self.report_finished({stage.stage_id for stage in active})

    def report_finished(self, active_ids: set[int]) -> None:
        for stage_id in sorted(set(self.last) - active_ids):
            self.log.info(stage_now(self.spark, self.last.pop(stage_id)).finished_line())

    def run(self) -> None:
        while not self.stop.wait(self.interval_s):
            try:
                self.poll()
            except Exception as exc:  # progress is best effort: a stopped context must not fail the asset
                self.log.info(f"spark progress reporting stopped: {exc}")
                return


@contextmanager
def spark_progress(spark, log: InfoLogger, interval_s: float = 5.0) -> Iterator[None]:
    """Log active Spark stage progress every `interval_s` seconds while the block runs."""
    poller = _Poller(spark, log, interval_s)
    poller.thread.start()
    try:
        yield
    finally:
        poller.stop.set()
        poller.thread.join(timeout=interval_s + 5)
        try:  # stages that ended after the last poll still get their "finished" line
            poller.report_finished(set())
        except Exception:  # noqa: BLE001 - best effort, as in the poller
            pass
