"""The run-folder lease: one writer at a time, a stale lease (dead pids / old heartbeat) taken over safely."""

import json
import subprocess
import sys
import threading
import time

import pytest

from marin_assets.train.lease import (
    LEASE_FILE,
    LeaseHeld,
    LeaseLost,
    LeaseUnreadable,
    LeaseRecord,
    RunLease,
    is_stale,
    lease_env,
    lease_from_env,
    pid_alive,
)
from marin_assets_tests.gcs_emulator import gcs_emulator  # noqa: F401  (the fixture)


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_live_lease_refuses_a_second_writer_and_names_the_holder(tmp_path):
    first = RunLease(str(tmp_path / "run"), "run-a")
    first.acquire()
    with pytest.raises(LeaseHeld, match=r"being written by run run-a \(pid \d+"):
        RunLease(str(tmp_path / "run"), "run-b").acquire(wait_s=0.2, poll_s=0.05)
    first.release()
    assert not (tmp_path / "run" / LEASE_FILE).exists()
    assert RunLease(str(tmp_path / "run"), "run-b").acquire().run_id == "run-b"


def test_a_waiting_writer_gets_the_lease_once_it_is_released(tmp_path):
    first = RunLease(str(tmp_path / "run"), "run-a")
    first.acquire()
    threading.Timer(0.3, first.release).start()
    started = time.monotonic()
    assert RunLease(str(tmp_path / "run"), "run-b").acquire(wait_s=10, poll_s=0.05).run_id == "run-b"
    assert time.monotonic() - started < 5


def test_a_lease_of_dead_processes_is_taken_over_and_the_old_holder_learns_it_lost(tmp_path):
    old = RunLease(str(tmp_path / "run"), "run-a")
    old.acquire()
    record = json.loads((tmp_path / "run" / LEASE_FILE).read_text())
    (tmp_path / "run" / LEASE_FILE).write_text(json.dumps({**record, "pid": dead_pid(), "trainer_pid": dead_pid()}))
    new = RunLease(str(tmp_path / "run"), "run-b")
    new.acquire()
    assert new.taken_over is not None and new.taken_over.run_id == "run-a"
    with pytest.raises(LeaseLost, match="now held by run run-b"):
        old.heartbeat()
    assert [p.name for p in (tmp_path / "run").iterdir()] == [LEASE_FILE]  # the stale one is gone


def test_staleness_by_heartbeat_age_and_by_pids():
    now = time.time()
    live = LeaseRecord("t", "r", pid=__import__("os").getpid(), host=__import__("socket").gethostname(), heartbeat=now)
    assert not is_stale(live, stale_after_s=60, now=now)
    assert is_stale(live, stale_after_s=60, now=now + 61)
    assert is_stale(LeaseRecord("t", "r", dead_pid(), live.host, now), stale_after_s=60, now=now)
    # another host's pids say nothing here: only the heartbeat counts
    assert not is_stale(LeaseRecord("t", "r", dead_pid(), "elsewhere", now), stale_after_s=60, now=now)
    assert not pid_alive(None) and pid_alive(live.pid)


def test_racing_takers_of_one_stale_lease_end_with_exactly_one_holder(tmp_path):
    run = str(tmp_path / "run")
    RunLease(run, "dead").acquire()
    path = tmp_path / "run" / LEASE_FILE
    path.write_text(json.dumps({**json.loads(path.read_text()), "pid": dead_pid()}))
    winners, losers, errors = [], [], []

    def take(i):
        try:
            winners.append(RunLease(run, f"run-{i}").acquire(wait_s=0.5, poll_s=0.05).run_id)
        except LeaseHeld:
            losers.append(i)
        except Exception as exc:  # e.g. a half-written lease read as JSON: a taker must never crash
            errors.append(repr(exc))

    threads = [threading.Thread(target=take, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(winners) == 1 and len(losers) == 5
    assert json.loads(path.read_text())["run_id"] == winners[0]


def test_a_lease_read_mid_write_is_read_again_and_a_broken_one_is_named(tmp_path):
    lease = RunLease(str(tmp_path / "run"), "reader")
    lease.acquire()
    record = (tmp_path / "run" / LEASE_FILE).read_text()
    path = tmp_path / "run" / LEASE_FILE
    path.write_text("")  # created, bytes not yet written

    def finish_write():
        time.sleep(0.05)
        path.write_text(record)

    writer = threading.Thread(target=finish_write)
    writer.start()
    assert lease.read().run_id == "reader"
    writer.join()
    path.write_text('{"token": "abc", "run_')
    with pytest.raises(LeaseUnreadable, match="not a lease record"):
        lease.read()


def test_a_heartbeat_stopped_before_it_lands_leaves_the_previous_lease_whole(tmp_path, monkeypatch):
    # The trainer's heartbeat thread is a daemon: the interpreter stops it wherever it is at exit. A
    # rewrite in place stopped after its truncate left an empty lease that the launcher's release could
    # not read (LeaseUnreadable in test_preemption, 2026-12-04); the new bytes now land in one rename.
    lease = RunLease(str(tmp_path / "run"), "beating")
    before = lease.acquire().heartbeat

    def stopped(*args):
        raise SystemExit("interpreter exit")

    monkeypatch.setattr("marin_assets.train.lease.os.replace", stopped)
    with pytest.raises(SystemExit):
        lease.heartbeat(trainer_pid=123)
    monkeypatch.undo()
    current = lease.read()
    assert (current.run_id, current.heartbeat, current.trainer_pid) == ("beating", before, None)
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == [LEASE_FILE]  # no temporary file left
    lease.heartbeat(trainer_pid=123)
    assert lease.read().trainer_pid == 123
    lease.release()
    assert not (tmp_path / "run" / LEASE_FILE).exists()


def test_the_trainer_finds_its_lease_from_the_environment_and_refuses_a_foreign_one(tmp_path):
    lease = RunLease(str(tmp_path / "run"), "run-a")
    lease.acquire()
    env = lease_env(lease)
    child = lease_from_env(env)
    child.heartbeat(trainer_pid=1234)
    assert json.loads((tmp_path / "run" / LEASE_FILE).read_text())["trainer_pid"] == 1234
    with pytest.raises(LeaseLost):
        lease_from_env({**env, "MARIN_LEASE_TOKEN": "someone-else"})
    assert lease_from_env({}) is None


def test_lease_on_gcs_is_exclusive(gcs_emulator):  # noqa: F811
    run = gcs_emulator.root("lease-test/run")
    first = RunLease(run, "run-a")
    first.acquire()
    with pytest.raises(LeaseHeld):
        RunLease(run, "run-b").acquire(wait_s=0)
    first.release()
    assert RunLease(run, "run-b").acquire().run_id == "run-b"
