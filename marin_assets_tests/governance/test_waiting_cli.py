"""`marin materialize-all` waiting for the `training` pool slot sleeps (no core spun) and stops on SIGTERM,
before it starts the run: no run of the waiting asset, no claim left behind."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


WAITING = "[marin] waiting for a slot of pool 'training' (1 slot(s), held by run(s) another-run)"


def test_a_run_waiting_for_a_pool_slot_sleeps_and_stops_on_sigterm(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(REPO / "deployments" / "local" / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        storage = instance.event_log_storage
        storage.set_concurrency_slots("training", 1)
        assert storage.claim_concurrency_slot("training", "another-run", "training_run", 0).is_claimed
        log = open(tmp_path / "cli.log", "w")
        env = {**os.environ, "DAGSTER_HOME": str(home), "MARIN_STORAGE_ROOT": str(tmp_path / "storage")}
        cli = subprocess.Popen([sys.executable, "-m", "marin_assets.cli", "materialize-all", "--only", "training_run"],
                               stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        try:
            deadline = time.monotonic() + 300
            while WAITING not in (tmp_path / "cli.log").read_text() and time.monotonic() < deadline:
                assert cli.poll() is None, (tmp_path / "cli.log").read_text()[-3000:]
                time.sleep(0.5)
            assert WAITING in (tmp_path / "cli.log").read_text(), "the CLI never waited for the training slot"
            # waiting: sleeping between claim checks, not spinning a core (was ~100%)
            proc = psutil.Process(cli.pid)
            samples = [proc.cpu_percent(interval=3) for _ in range(4)]
            assert max(samples[1:]) < 10, samples
            cli.send_signal(signal.SIGTERM)
            assert cli.wait(timeout=60) == 143
        finally:
            if cli.poll() is None:
                cli.kill()
        out = (tmp_path / "cli.log").read_text()
        assert "[marin] stopped by" in out
        assert not instance.get_runs(dg.RunsFilter(tags={"marin/asset": "training_run"}))  # never started
        assert all(p.run_id == "another-run" for p in storage.get_concurrency_info("training").pending_steps)
        assert storage.get_concurrency_info("training").active_run_ids == {"another-run"}
