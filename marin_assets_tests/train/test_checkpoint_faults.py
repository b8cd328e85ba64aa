"""Damaged checkpoints and full disks: no human step, nothing unrestorable left in place.

- The latest checkpoint's files truncated: the rerun sets it aside (named in the log and the result),
  resumes from the previous one and reaches the uninterrupted run's final hash.
- The checkpoint folder's disk (a small tmpfs) fills during a checkpoint write: the trainer exits with
  an error naming the folder and its free space; every checkpoint left in place restores; with room
  again the rerun finishes with the uninterrupted hash.
- The watchdog outlives failures of its own logging; the log handler outlives a full log disk.
"""

import errno
import json
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import dagster as dg
import pytest

from marin_assets.train import trainer_guard
from marin_assets.train.checkpoint_check import DAMAGED_PREFIX, check_checkpoint
from marin_assets.train.checkpoints import checkpoint_steps, checkpoint_uri, latest_checkpoint_step
from marin_assets.defs.train.definitions import build_defs
from marin_assets.train.maxtext_entry import ProgressHandler, describe_failure
from marin_assets.train.runs import TrainingRuns
from marin_assets_tests.local_resources import local_resources
from marin_assets_tests.train.mixture_fixture import build_mixture
from marin_assets_tests.train.reference_run import publish_hash, published_hash, run_key, session_dir
from marin_assets_tests.train.test_preemption import TINY, trainers

BASELINES = Path(__file__).parent / "baselines"
RUNS = TrainingRuns(runs={"tiny-reference": TINY, "tiny-damaged": TINY, "tiny-full-disk": TINY})


class FailingHandler(logging.Handler):
    def emit(self, record):
        raise OSError(errno.ENOSPC, "No space left on device")


class FailingLease:
    def __init__(self):
        self.beats = 0

    def heartbeat(self, trainer_pid):
        self.beats += 1
        raise OSError(errno.ENOSPC, "No space left on device")


def test_watchdog_survives_failures_of_its_own_logging(monkeypatch):
    monkeypatch.setattr(trainer_guard, "HEARTBEAT_S", 0.01)
    handler = FailingHandler()
    trainer_guard.log.addHandler(handler)
    lease, stop = FailingLease(), threading.Event()
    try:
        thread = trainer_guard.start_watchdog(None, lease, poll_s=0.01, stop=stop)
        deadline = time.monotonic() + 10
        while lease.beats < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert thread.is_alive() and lease.beats >= 5, "the watchdog died on its failing log write"
    finally:
        stop.set()  # left running, it logged a failed beat into every later test of this worker
        thread.join(timeout=5)
        trainer_guard.log.removeHandler(handler)
    assert not thread.is_alive()


def test_progress_handler_survives_a_full_log_disk(tmp_path, monkeypatch):
    handler = ProgressHandler(lambda msg: None, steps=10, log_file=str(tmp_path / "train.log"))

    def full(_text):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(handler.file, "write", full)
    monkeypatch.setattr(logging, "raiseExceptions", False)  # handleError stays quiet
    handler.emit(logging.LogRecord("x", logging.WARNING, __file__, 1, "completed step: 3, loss: 1.0", None, None))


def test_a_full_disk_failure_names_the_folder_and_its_free_space(tmp_path):
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as inner:
            raise ValueError("RESOURCE_EXHAUSTED: writing d/abc failed") from inner
    except ValueError as exc:
        text = describe_failure(exc, str(tmp_path / "checkpoints"))
    assert text.startswith(f"disk full while writing {tmp_path}/checkpoints: ")
    assert f"bytes free of {shutil.disk_usage(tmp_path).total} on the file system of {tmp_path}" in text
    assert "disk full" not in describe_failure(ValueError("shape mismatch"), str(tmp_path))


def test_a_checkpoint_without_items_metadata_is_damaged(tmp_path):
    (tmp_path / "items").mkdir()
    (tmp_path / "_CHECKPOINT_METADATA").write_text("{}")
    with pytest.raises(Exception, match="items/_METADATA is missing"):
        check_checkpoint(str(tmp_path))


# ---- end to end: real MaxText on CPU -------------------------------------------------------------

@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("storage")
    build_mixture(root)
    defs = build_defs(RUNS, baselines_dir=BASELINES)
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
    return {"root": root, "assets": [defs.get_assets_def("training_plan"), defs.get_assets_def("training_run"), mixture]}


def materialize(env, run_name, selection=("training_plan", "training_run"), logs=None):
    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize(env["assets"], partition_key=run_name, raise_on_error=False, instance=instance,
                                resources=local_resources(str(env["root"])), selection=list(selection))
        if logs is not None:
            logs.extend(e.user_message for e in instance.all_logs(result.run_id))
        return result


@pytest.fixture(scope="module")
def uninterrupted_hash(env, tmp_path_factory):
    folder, key = session_dir(tmp_path_factory), run_key(TINY, env["root"] / "mixtures" / "tiny")
    known = published_hash(folder, key)
    if known is None:
        assert materialize(env, "tiny-reference").success
        known = json.loads((env["root"] / "training" / "tiny-reference" / "final" / "result.json").read_text())[
            "checkpoint_hash"]
        publish_hash(folder, key, known)
    return known


def failure_text(result) -> str:
    return next(e for e in result.all_events if e.is_step_failure).step_failure_data.error.to_string()


def train_until_killed(env, run_name, at_checkpoint):
    """Materialize; kill -9 the trainer once checkpoint `at_checkpoint` is complete; the failed result."""
    checkpoints = env["root"] / "training" / run_name / "checkpoints"
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.update(result=materialize(env, run_name)))
    thread.start()
    deadline = time.monotonic() + 900
    while thread.is_alive() and time.monotonic() < deadline:
        if (latest_checkpoint_step(str(checkpoints)) or 0) >= at_checkpoint:
            for proc in trainers(env["root"]):
                proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.05)
    thread.join()
    return outcome["result"]


@pytest.mark.slow
def test_truncated_latest_checkpoint_is_set_aside_and_the_run_resumes_from_the_previous(env, uninterrupted_hash):
    run_dir = env["root"] / "training" / "tiny-damaged"
    assert not train_until_killed(env, "tiny-damaged", 20).success
    steps = checkpoint_steps(str(run_dir / "checkpoints"))
    latest, previous = steps[-1], steps[-2]
    assert 20 <= latest < 60
    for path in Path(checkpoint_uri(str(run_dir / "checkpoints"), latest)).rglob("*"):
        if path.is_file():
            os.truncate(path, path.stat().st_size // 2)

    logs = []
    result = materialize(env, "tiny-damaged", selection=("training_run",), logs=logs)
    assert result.success
    res = json.loads((run_dir / "final" / "result.json").read_text())
    assert res["resumed_from_step"] == previous
    aside = res["damaged_checkpoints"][str(latest)]
    assert Path(aside).is_dir() and Path(aside).name.startswith(f"{DAMAGED_PREFIX}{latest}-")
    assert any(f"checkpoint {latest} at" in m and "is damaged" in m and aside in m for m in logs), logs
    assert res["checkpoint_hash"] == uninterrupted_hash


@pytest.fixture
def small_tmpfs(env):
    """A 3 MiB tmpfs over the full-disk run's checkpoints/ (room for about one checkpoint); skipped where
    mounting is not permitted."""
    mount = env["root"] / "training" / "tiny-full-disk" / "checkpoints"
    mount.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root/CAP_SYS_ADMIN): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.slow
def test_a_full_disk_during_a_checkpoint_write_names_the_folder_and_leaves_only_restorable_checkpoints(
        env, uninterrupted_hash, small_tmpfs):
    result = materialize(env, "tiny-full-disk")
    assert not result.success
    text = failure_text(result)
    assert f"disk full while writing {small_tmpfs}" in text and "bytes free of" in text, text
    for step in checkpoint_steps(str(small_tmpfs)):
        check_checkpoint(checkpoint_uri(str(small_tmpfs), step), restore=True)  # raises if unrestorable

    subprocess.run(["mount", "-o", "remount,size=256m", str(small_tmpfs)], check=True)  # room again
    assert materialize(env, "tiny-full-disk", selection=("training_run",)).success
    res = json.loads((env["root"] / "training" / "tiny-full-disk" / "final" / "result.json").read_text())
    assert res["checkpoint_hash"] == uninterrupted_hash


def test_a_committed_checkpoint_without_items_metadata_is_set_aside_by_name(tmp_path):
    from marin_assets.train.checkpoint_check import newest_good_checkpoint

    step = tmp_path / "75"
    (step / "items").mkdir(parents=True)
    (step / "_CHECKPOINT_METADATA").write_text("{}")  # orbax's completion marker, as in the issue
    warnings = []
    verdict = newest_good_checkpoint(str(tmp_path), warnings.append)
    assert verdict.step is None and list(verdict.set_aside) == [75]
    assert not step.exists() and Path(verdict.set_aside[75]).name.startswith(f"{DAMAGED_PREFIX}75-")
    assert checkpoint_steps(str(tmp_path)) == []  # nothing left that MaxText would try to restore
    assert "checkpoint 75" in warnings[0] and "items/_METADATA is missing" in warnings[0]
