"""spark_progress logs active stage progress of a real local Spark job into a real Dagster run log."""

import re
import time

import dagster as dg
import pytest

from marin_assets.resources.spark_progress import active_stages, spark_progress

PROGRESS_LINE = re.compile(r"spark stage \d+ \((.+)\): (\d+)/8 tasks done, (\d+) running")


def list_log(lines: list[str]):
    """A logger class that keeps every info line in `lines`."""

    class ListLog:
        def info(self, msg: str) -> None:
            lines.append(msg)

    return ListLog


def slow_job(spark) -> int:
    """8 tasks of ~0.6 s on local[2]: about 2.5 s, several polls at 0.2 s."""
    return spark.sparkContext.parallelize(range(8), 8).map(lambda x: time.sleep(0.6) or x).sum()


@pytest.mark.slow  # first Python UDF of the session starts Spark's Python workers
def test_progress_lines_reach_the_dagster_run_log_and_stop_with_the_block(spark):
    @dg.asset
    def slow_spark_asset(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        with spark_progress(spark, context.log, interval_s=0.2):
            total = slow_job(spark)
        return dg.MaterializeResult(metadata={"total": total})

    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize([slow_spark_asset], instance=instance)
    assert result.success
    messages = [e.user_message for e in instance.all_logs(result.run_id)]
    progress = [m for m in messages if PROGRESS_LINE.search(m)]
    assert progress, f"no progress line in {messages}"
    done = [int(PROGRESS_LINE.search(m).group(2)) for m in progress]
    # advancing, and logged while the stage still ran (a last poll may see 8/8 before the stage closes)
    assert done == sorted(done) and done[0] < 8
    assert "sum at" in PROGRESS_LINE.search(progress[0]).group(1)  # the stage is named by its call site


def test_no_line_after_the_block_and_nothing_active_between_jobs(spark):
    lines: list[str] = []
    ListLog = list_log(lines)

    with spark_progress(spark, ListLog(), interval_s=0.2):
        slow_job(spark)
    logged = len(lines)
    assert logged >= 1
    time.sleep(0.6)
    assert len(lines) == logged  # the poller thread stopped with the block
    assert active_stages(spark) == []


def test_each_reported_stage_gets_a_finished_line_with_its_totals(spark):
    lines: list[str] = []
    ListLog = list_log(lines)

    with spark_progress(spark, ListLog(), interval_s=0.2):
        slow_job(spark)
    finished = [line for line in lines if " finished: " in line]
    assert finished and all(re.search(r"finished: 8/8 tasks$", line) for line in finished), lines
    progress = [line for line in lines if PROGRESS_LINE.search(line)]
    assert all("(job " in line and " of " in line for line in progress), progress  # job context


def test_session_start_is_logged_with_its_duration():
    from marin_assets.resources.spark import SparkResource

    lines: list[str] = []
    ListLog = list_log(lines)

    SparkResource().get_session(ListLog())  # the session fixture made one: getOrCreate returns it
    assert lines[0].startswith("starting Spark session (master local[2])")
    assert re.match(r"Spark \S+ session ready in \d+\.\d s \(master local\[2\], \d+ cores\)", lines[1]), lines
