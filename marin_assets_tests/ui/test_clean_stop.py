"""`dagster dev` on this code location stops on one SIGTERM: no process of its tree is left after 15 s.

The TERM goes to the `dagster dev` process only (as a service manager or a terminal's kill sends it),
not to its process group: what the project adds to the webserver, daemon and code servers (Spark
sessions, thread pools, signal handlers) must not keep any of them alive.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from marin_assets_tests.dagster_dev import dagster_dev
from marin_assets_tests.ui.quickstart import ingest_sources, quickstart_workspace

pytestmark = pytest.mark.slow
STOP_WITHIN_S = 15


def process_tree(root: int) -> dict[int, str]:
    """pid -> command line of `root`, its descendants and its session's members (a child may re-parent)."""
    parents, sessions, commands = {}, {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            commands[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # exited while listed
        fields = stat.rsplit(")", 1)[1].split()  # after "(comm)": state, ppid, pgrp, session, ...
        parents[int(entry.name)], sessions[int(entry.name)] = int(fields[1]), int(fields[3])
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, ppid in parents.items() if ppid in tree or sessions[pid] == root} - tree
        tree |= more
        grew = bool(more)
    return {pid: commands[pid] for pid in tree if pid in commands}


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's wait is missing


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
        time.sleep(20)  # the daemon's first sensor ticks: the project's code runs in the code server
        tree = process_tree(server.pid)
        os.kill(server.pid, signal.SIGTERM)
        stop_by = time.monotonic() + STOP_WITHIN_S
        while time.monotonic() < stop_by and any(alive(pid) for pid in tree):
            time.sleep(0.5)
        left = {pid: cmd[:120] for pid, cmd in tree.items() if alive(pid)}
        log_tail = server.log.read_text(errors="replace")[-3000:]
        assert not left, f"still running {STOP_WITHIN_S} s after SIGTERM: {left}; dagster dev log:\n{log_tail}"
