"""Preemption is routine: SIGTERM to the trainer at a random step -> it checkpoints that step and exits,
the step is retried in the same run with no human action, resumes from that checkpoint, and ends with
the same final checkpoint hash as an uninterrupted run (the committed baseline's).

Also: a trainer whose launcher is killed -9 exits by itself (parent-death signal), leaving a stale
lease that the next run takes over, resuming from the trainer's last checkpoint.

Both tests run for the dense tiny model and for the tiny mixtral MoE (its router and expert weights
must come back exactly, too).
"""

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import dagster as dg
import psutil
import pytest

from marin_assets.train.checkpoints import latest_checkpoint_step
from marin_assets.defs.train.definitions import build_defs
from marin_assets.train.lease import LEASE_FILE, LeaseRecord
from marin_assets.train.metrics import StepMetric, parse_line
from marin_assets.train.runs import TrainingRuns
from marin_assets_tests.local_resources import local_resources
from marin_assets_tests.train.mixture_fixture import build_mixture
from marin_assets_tests.train.reference_run import publish_hash, published_hash, run_key, session_dir

pytestmark = pytest.mark.slow

BASELINES = Path(__file__).parent / "baselines"
TINY = {"model": "tiny-0.2m", "mixture": "tiny", "budget": {"steps": 61}, "eval": {"interval": 30},
        "checkpoint": {"period": 10}, "log_period": 5, "resources": {"accelerator": "cpu", "memory_gib": 4}}
MODELS = {"tiny": TINY, "moe": {**TINY, "model": "tiny-moe-0.5m"}}  # run-name prefix -> run entry
RUNS = TrainingRuns(runs={f"{prefix}-{role}": run for prefix, run in MODELS.items()
                          for role in ("reference", "preempted", "orphaned")})
TRAINER = "marin_assets.train.maxtext_entry"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("storage")
    build_mixture(root)
    return {"root": root, "assets": assets_for_subprocess()}


def assets_for_subprocess():
    defs = build_defs(RUNS, baselines_dir=BASELINES)
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
    return [defs.get_assets_def("training_plan"), defs.get_assets_def("training_run"), mixture]


def materialize(env, run_name, selection=("training_plan", "training_run"), logs=None):
    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize(env["assets"], partition_key=run_name, raise_on_error=False, instance=instance,
                                resources=local_resources(str(env["root"])), selection=list(selection))
        if logs is not None:
            logs.extend(e.user_message for e in instance.all_logs(result.run_id))
        return result


@pytest.fixture(scope="module", params=sorted(MODELS))
def prefix(request):
    return request.param


@pytest.fixture(scope="module")
def uninterrupted_hash(env, prefix, tmp_path_factory):
    """The final checkpoint hash of an uninterrupted run of the same entry on the same data: test_training_e2e's
    (same config, this session) when it has published one, else trained here."""
    folder, key = session_dir(tmp_path_factory), run_key(MODELS[prefix], env["root"] / "mixtures" / "tiny")
    known = published_hash(folder, key)
    if known is not None:
        return known
    assert materialize(env, f"{prefix}-reference").success
    trained = json.loads((env["root"] / "training" / f"{prefix}-reference" / "final" / "result.json").read_text())[
        "checkpoint_hash"]
    publish_hash(folder, key, trained)
    return trained


def trainers(root=None):
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if TRAINER in cmdline and (root is None or str(root) in cmdline):
            found.append(proc)
    return found


def last_logged_step(run_dir: Path) -> int:
    steps = [-1]
    for log in (run_dir / "logs").glob("*.log"):
        steps += [m.step for m in map(parse_line, log.read_text().splitlines()) if isinstance(m, StepMetric)]
    return max(steps)


def test_sigterm_at_a_random_step_checkpoints_retries_and_matches_the_uninterrupted_hash(env, prefix, uninterrupted_hash):
    run_dir = env["root"] / "training" / f"{prefix}-preempted"
    at_step = random.Random().randint(3, 55)
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.update(result=materialize(env, f"{prefix}-preempted")))
    thread.start()
    signalled, deadline = None, time.monotonic() + 600
    while signalled is None and thread.is_alive() and time.monotonic() < deadline:
        if (run_dir / "logs").exists() and last_logged_step(run_dir) >= at_step:
            for proc in trainers(env["root"]):
                proc.send_signal(signal.SIGTERM)
                signalled = last_logged_step(run_dir)
        time.sleep(0.05)
    thread.join()
    assert signalled is not None and signalled < 60, f"the trainer was not signalled mid-run (at step {at_step})"
    result = outcome["result"]
    assert result.success  # no human action: the step was retried in the same run
    retries = [e for e in result.all_events if e.event_type_value == "STEP_UP_FOR_RETRY"]
    assert len(retries) == 1
    res = json.loads((run_dir / "final" / "result.json").read_text())
    assert res["checkpoint_hash"] == uninterrupted_hash
    # the preemption checkpoint is the step the signal interrupted (MaxText logs a step or so late),
    # not the last periodic one
    assert signalled <= res["resumed_from_step"] <= signalled + 5
    assert not (run_dir / LEASE_FILE).exists()  # released after the run
    # Efficiency spans both attempts: the preempted one left its timeline, the resume restored a checkpoint.
    eff = res["efficiency"]
    assert eff["attempts"] == 2 and eff["badput_s"]["checkpoint_restore"] > 0 and 0 < eff["goodput"] < 1
    assert eff["productive_s"] + sum(eff["badput_s"].values()) == pytest.approx(eff["total_s"], rel=1e-3)


def test_launcher_killed_9_trainer_exits_and_the_next_run_takes_over_the_lease(env, prefix, uninterrupted_hash):
    run_name = f"{prefix}-orphaned"
    run_dir = env["root"] / "training" / run_name
    assert materialize(env, run_name, selection=("training_plan",)).success
    script = ("import sys; from pathlib import Path; from marin_assets_tests.train import test_preemption as t; "
              "env = {'root': Path(sys.argv[1]), 'assets': t.assets_for_subprocess()}; "
              "t.materialize(env, sys.argv[2], selection=('training_run',))")
    launcher = subprocess.Popen([sys.executable, "-c", script, str(env["root"]), run_name], env={**os.environ})
    try:
        deadline = time.monotonic() + 600
        while (latest_checkpoint_step(str(run_dir / "checkpoints")) or 0) < 10 and time.monotonic() < deadline:
            assert launcher.poll() is None, "the launcher exited before its trainer checkpointed"
            time.sleep(0.05)
        trainer = trainers(env["root"])
        assert trainer, "no trainer process"
        before_kill = latest_checkpoint_step(str(run_dir / "checkpoints"))
        launcher.send_signal(signal.SIGKILL)
        launcher.wait()
        gone, alive = psutil.wait_procs(trainer, timeout=120)
        assert not alive, "the trainer outlived its killed launcher"
    finally:
        if launcher.poll() is None:
            launcher.kill()
    stale = LeaseRecord(**json.loads((run_dir / LEASE_FILE).read_text()))
    assert stale.pid == launcher.pid and not (run_dir / "final").exists()
    checkpointed = latest_checkpoint_step(str(run_dir / "checkpoints"))
    # the parent-death SIGTERM made it checkpoint the step it was on before exiting
    assert checkpointed is not None and before_kill < checkpointed < 60

    logs = []
    second = materialize(env, run_name, selection=("training_run",), logs=logs)
    assert second.success
    warnings = [m for m in logs if "took over the stale lease" in m]
    assert warnings and f"pid {launcher.pid}" in warnings[0]
    res = json.loads((run_dir / "final" / "result.json").read_text())
    assert res["resumed_from_step"] == checkpointed
    assert res["checkpoint_hash"] == uninterrupted_hash

