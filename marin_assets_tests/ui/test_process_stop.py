"""The stop watcher names a process that ignores TERM, and passes a tree that exits on it (real processes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from marin_assets_tests.ui.process_stop import ThreadClock, process_tree, thread_times_s, wait_for_stop

# A parent that exits on TERM and a child (its own session member) that ignores TERM and sleeps, as a
# code server waiting for its heartbeat to time out would.
PARENT = """
import signal, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", sys.argv[1]])
print(child.pid, flush=True)
time.sleep(60)
"""
IGNORES_TERM = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
EXITS_ON_TERM = "import time; time.sleep(60)"


def start_tree(child_code: str) -> tuple[subprocess.Popen, int]:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, child_code], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    child = int(parent.stdout.readline())
    time.sleep(0.5)  # the child's signal disposition is set
    return parent, child


def stop(parent: subprocess.Popen) -> None:
    try:
        os.killpg(parent.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    parent.wait()


def test_a_child_that_ignores_term_is_named_with_its_state():
    parent, child = start_tree(IGNORES_TERM)
    try:
        tree = process_tree(parent.pid)
        assert set(tree) == {parent.pid, child}
        os.killpg(parent.pid, signal.SIGTERM)
        report = wait_for_stop(tree, within_s=2)
        assert list(report.left) == [child] and report.left[child][0] == "S", report.describe()
        assert parent.pid in report.exited_after_s
        assert report.waited_s < 10  # a sleeper waits for no cpu: the deadline is not extended much
        assert "ALIVE (S)" in report.describe()
    finally:
        stop(parent)


def test_a_tree_that_exits_on_term_leaves_nothing():
    parent, child = start_tree(EXITS_ON_TERM)
    try:
        tree = process_tree(parent.pid)
        os.killpg(parent.pid, signal.SIGTERM)
        report = wait_for_stop(tree, within_s=10)
        assert not report.left, report.describe()
        assert set(report.exited_after_s) == {parent.pid, child}
    finally:
        stop(parent)


def test_thread_clock_keeps_the_time_of_threads_that_exited():
    """Threads that end before the process (a thread pool shutting down) still count, never negative."""
    code = ("import threading, time\n"
            "def burn(): sum(range(3 * 10**6))\n"
            "for _ in range(4):\n    t = threading.Thread(target=burn); t.start(); t.join(); time.sleep(0.2)\n"
            "time.sleep(30)")
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.1)
        clock = ThreadClock(proc.pid)
        cpu_s = []
        for _ in range(12):
            clock.read()
            cpu_s.append(clock.used_s()[0])
            time.sleep(0.25)
        assert all(b >= a for a, b in zip(cpu_s, cpu_s[1:])), cpu_s  # threads exited, the total never fell
        assert cpu_s[-1] > 0.05, cpu_s
    finally:
        proc.kill()
        proc.wait()
    assert thread_times_s(proc.pid) is None
