"""A `dagster asset materialize` run killed -9 mid-training, with the daemon running the shipped local
dagster.yaml: the run had tagged itself with its pid and host, so dead_run_worker_sensor marks it failed
and frees its `training` pool slot; the next CLI run gets the slot at once, takes over the stale lease
and resumes from the checkpoint. No manual step (before: STARTED forever, the next run blocked on the pool)."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import dagster as dg
import psutil
import pytest

from marin_assets.resources.run_liveness import HOST_TAG, PID_TAG
from marin_assets.train.checkpoints import latest_checkpoint_step
from marin_assets_tests.dagster_dev import REPO_ROOT, dagster_dev
from marin_assets_tests.local_resources import local_resources
from marin_assets_tests.train import daemon_location
from marin_assets_tests.train.mixture_fixture import build_mixture
from marin_assets_tests.train.test_dead_run_worker import TRAINER, wait_for

pytestmark = pytest.mark.slow


def test_killed_cli_run_is_failed_its_slot_freed_and_the_next_run_resumes(tmp_path):
    root = tmp_path / "storage"
    build_mixture(root)
    with dg.DagsterInstance.ephemeral() as scratch:  # the plan, committed up front
        assert dg.materialize(daemon_location.ASSETS, partition_key=daemon_location.RUN_NAME, instance=scratch,
                              resources=local_resources(str(root)), selection=["training_plan"]).success
    env = {"MARIN_TEST_STORAGE_ROOT": str(root)}
    run_dir = root / "training" / daemon_location.RUN_NAME
    command = [sys.executable, "-m", "dagster", "asset", "materialize", "-m", "marin_assets_tests.train.daemon_location",
               "--select", "training_run", "--partition", daemon_location.RUN_NAME]
    with dagster_dev(tmp_path / "home", module="marin_assets_tests.train.daemon_location", env=env) as server:
        instance = dg.DagsterInstance.from_config(str(server.home))
        cli_env = {**os.environ, **env, "DAGSTER_HOME": str(server.home)}
        with open(tmp_path / "first-cli.log", "wb") as log:
            cli = subprocess.Popen(command, cwd=REPO_ROOT, env=cli_env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for(lambda: (latest_checkpoint_step(str(run_dir / "checkpoints")) or 0) >= 10, 900, "checkpoint 10")
            (run,) = instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]))
            assert run.tags[PID_TAG] == str(cli.pid) and run.tags[HOST_TAG] == socket.gethostname()
            assert instance.event_log_storage.get_concurrency_info("training").claimed_slots
            trainers = [p for p in psutil.Process(cli.pid).children(recursive=True)
                        if TRAINER in " ".join(p.cmdline())]
            assert trainers, "the trainer is not a child of the CLI process"
            cli.send_signal(signal.SIGKILL)
            cli.wait()
        finally:
            if cli.poll() is None:
                cli.kill()
        _, alive = psutil.wait_procs(trainers, timeout=120)
        assert not alive, "the trainer outlived its CLI run"
        checkpointed = latest_checkpoint_step(str(run_dir / "checkpoints"))
        assert checkpointed is not None and checkpointed < 60 and not (run_dir / "final").exists()

        # dead_run_worker_sensor (every 5 s): the run is failed and its pool slot freed
        wait_for(lambda: instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE, 120, "run failed")
        wait_for(lambda: not instance.event_log_storage.get_concurrency_info("training").claimed_slots, 30,
                 "the training slot freed")
        failure = [e.dagster_event.message for e in instance.all_logs(run.run_id)
                   if e.dagster_event and e.dagster_event.is_run_failure]
        assert failure and f"pid {cli.pid}" in failure[-1], failure

        # the next CLI run is not blocked on the pool: it takes over the lease, resumes and finishes
        second = subprocess.run(command, cwd=REPO_ROOT, env=cli_env, capture_output=True, text=True, timeout=900)
        assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
        assert "Step blocked by limit for pool training" not in second.stdout + second.stderr
        res = json.loads((run_dir / "final" / "result.json").read_text())
        assert res["resumed_from_step"] == checkpointed and res["checkpoint_step"] == 60
        assert not instance.event_log_storage.get_concurrency_info("training").claimed_slots
        instance.dispose()
