"""`dagster dev` on this code location stops on one SIGTERM: no process of its tree is left after 15 s.

The TERM goes to the `dagster dev` process only (as a service manager or a terminal's kill sends it),
not to its process group: what the project adds to the webserver, daemon and code servers (Spark
sessions, thread pools, signal handlers) must not keep any of them alive. The 15 s are the tree's own:
time its processes waited for a CPU beside another pytest worker is added (process_stop.py).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from marin_assets_tests.dagster_dev import dagster_dev
from marin_assets_tests.ui.process_stop import process_tree, wait_for_stop
from marin_assets_tests.ui.quickstart import ingest_sources, quickstart_workspace

pytestmark = pytest.mark.slow
STOP_WITHIN_S = 15
TICKED_SENSORS = ("source_files_sensor", "dead_run_worker_sensor")


def wait_for_log(log: Path, lines: list[str], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not all(line in (text := log.read_text(errors="replace")) for line in lines):
        assert time.monotonic() < deadline, f"no {lines} in the log within {timeout_s:.0f} s:\n{text[-3000:]}"
        time.sleep(0.5)


def test_dagster_dev_stops_on_one_sigterm(tmp_path):
    """After the quickstart (every source ingested, so the sensors start no run), started and stopped."""
    ws, env = quickstart_workspace(tmp_path)
    home = ws.root / "dagster_home"
    ingest_sources(home, env)
    with dagster_dev(home, module="marin_assets.definitions", attribute="defs", env=env) as server:
        deadline = time.monotonic() + 300
        while len(tree := process_tree(server.pid)) < 4 and time.monotonic() < deadline:
            time.sleep(1)  # the webserver, the daemon and the code server(s) come up one after another
        assert len(tree) >= 4, tree
        # the daemon's first sensor ticks: the project's code has run in the code server
        wait_for_log(server.log, [f"Sensor {name} skipped" for name in TICKED_SENSORS], timeout_s=180)
        tree = process_tree(server.pid)
        os.kill(server.pid, signal.SIGTERM)
        report = wait_for_stop(tree, STOP_WITHIN_S)
        print(report.describe())  # the stop's timeline, in the CI log with -rP or -s
        log_tail = server.log.read_text(errors="replace")[-3000:]
        assert not report.left, (f"still running {STOP_WITHIN_S} s (+ their wait for a cpu) after SIGTERM: "
                                 f"{report.describe()}\ndagster dev log:\n{log_tail}")
