"""A run worker killed -9 mid-training, with the daemon running the shipped local dagster.yaml: its
trainer exits with it, dead_run_worker_sensor marks the run failed, the instance frees its `training` pool slot, and
the retry run starts by itself, takes over the stale lease, resumes from the checkpoint and finishes.
No manual step."""

import json
import signal
import time

import dagster as dg
import psutil
import pytest

from marin_assets.defs.governance.run_health import run_worker_pid
from marin_assets.train.checkpoints import latest_checkpoint_step
from marin_assets_tests.dagster_dev import dagster_dev
from marin_assets_tests.local_resources import local_resources
from marin_assets_tests.train import daemon_location
from marin_assets_tests.train.mixture_fixture import build_mixture

pytestmark = pytest.mark.slow
TRAINER = "marin_assets.train.maxtext_entry"


def wait_for(predicate, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def test_killed_run_worker_is_failed_its_slot_freed_and_the_retry_resumes(tmp_path):
    from dagster_graphql import DagsterGraphQLClient

    root = tmp_path / "storage"
    build_mixture(root)
    with dg.DagsterInstance.ephemeral() as scratch:  # the plan, committed up front
        assert dg.materialize(daemon_location.ASSETS, partition_key=daemon_location.RUN_NAME, instance=scratch,
                              resources=local_resources(str(root)), selection=["training_plan"]).success
    env = {"MARIN_TEST_STORAGE_ROOT": str(root)}  # the worker's JAX cache (conftest) comes with os.environ
    run_dir = root / "training" / daemon_location.RUN_NAME
    with dagster_dev(tmp_path / "home", module="marin_assets_tests.train.daemon_location", env=env) as server:
        instance = dg.DagsterInstance.from_config(str(server.home))
        client = DagsterGraphQLClient("127.0.0.1", port_number=server.port)
        first = client.submit_job_execution(daemon_location.JOB, tags={"dagster/partition": daemon_location.RUN_NAME})
        wait_for(lambda: (latest_checkpoint_step(str(run_dir / "checkpoints")) or 0) >= 10, 900, "checkpoint 10")
        worker = psutil.Process(run_worker_pid(instance, first))
        trainers = [p for p in worker.children(recursive=True) if TRAINER in " ".join(p.cmdline())]
        assert trainers, "the trainer is not a child of the run worker"
        worker.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        _, alive = psutil.wait_procs(trainers, timeout=120)
        assert not alive, "the trainer outlived its run worker"
        checkpointed = latest_checkpoint_step(str(run_dir / "checkpoints"))
        assert checkpointed is not None and checkpointed < 60 and not (run_dir / "final").exists()

        # dead_run_worker_sensor: the dead worker's run is failed within a bounded time (every 5 s)
        wait_for(lambda: instance.get_run_by_id(first).status == dg.DagsterRunStatus.FAILURE, 120, "run failed")
        assert time.monotonic() - killed_at < 150
        # run retries: the retry starts by itself (it needs the freed pool slot) and finishes
        retry = wait_for(lambda: instance.get_runs(dg.RunsFilter(tags={"dagster/parent_run_id": first})), 180,
                         "the retry run")[0]
        status = wait_for(lambda: client.get_run_status(retry.run_id) if client.get_run_status(retry.run_id) in (
            dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE) else None, 900, "the retry to finish")
        assert status == dg.DagsterRunStatus.SUCCESS, server.log.read_text()[-3000:]
        logs = [e.user_message for e in instance.all_logs(retry.run_id)]
        assert any("took over the stale lease" in m for m in logs)
        res = json.loads((run_dir / "final" / "result.json").read_text())
        assert res["resumed_from_step"] == checkpointed and res["checkpoint_step"] == 60
        assert not instance.event_log_storage.get_concurrency_info("training").claimed_slots
        instance.dispose()
