"""Watching a process tree stop: which processes are left, and how long they waited for a CPU.

`dagster dev` stops in a chain (webserver and daemon, then its code server, then the code server's
child), and every link is a Python interpreter tearing down (0.5-0.9 s of CPU each, measured). Beside
a second pytest worker running JAX or Spark, those links wait for a CPU: on a loaded 2-core machine
the chain took 3 s alone and 11.5 s beside a MaxText test. So the deadline counts the tree's own time:
time a process of the tree spent runnable but without a CPU (the kernel's run-queue wait,
/proc/<pid>/task/<tid>/schedstat) is added to it. A process that ignores TERM, or sleeps until a
heartbeat times out, waits for no CPU and still fails at the deadline.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

MAX_RUN_QUEUE_WAIT_S = 120.0  # a bound on the extension: a tree that keeps running never passes


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


def state(pid: int) -> str | None:
    """The kernel's one-letter state (R running, S sleeping, D disk wait, Z zombie), None once reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def alive(pid: int) -> bool:
    return state(pid) not in (None, "Z")  # a zombie has exited; only its parent's wait is missing


def thread_times_s(pid: int) -> dict[int, tuple[float, float]] | None:
    """tid -> (seconds on a CPU, seconds runnable but waiting for one) of each living thread of `pid`."""
    times = {}
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                run_ns, wait_ns = (task / "schedstat").read_text().split()[:2]
            except OSError:
                continue  # the thread exited while listed
            times[int(task.name)] = (int(run_ns) / 1e9, int(wait_ns) / 1e9)
    except OSError:
        return None  # the process exited meanwhile
    return times


class ThreadClock:
    """Seconds on a CPU and waiting for one since the first reading, summed over a process's threads
    (a thread that exits keeps what it used; one started later counts from zero)."""

    def __init__(self, pid: int):
        self.pid, self.first, self.last = pid, thread_times_s(pid) or {}, {}

    def read(self) -> None:
        self.last.update(thread_times_s(self.pid) or {})

    def used_s(self) -> tuple[float, float]:
        deltas = [(run - self.first.get(tid, (0.0, 0.0))[0], wait - self.first.get(tid, (0.0, 0.0))[1])
                  for tid, (run, wait) in self.last.items()]
        return sum(d[0] for d in deltas), sum(d[1] for d in deltas)


@dataclass
class StopReport:
    """What a stop left behind: pid -> (state, command) of the living, seconds per pid, the extension used."""
    left: dict[int, tuple[str, str]]
    exited_after_s: dict[int, float]
    cpu_s: dict[int, float] = field(default_factory=dict)
    run_queue_wait_s: dict[int, float] = field(default_factory=dict)
    waited_s: float = 0.0

    def describe(self) -> str:
        def line(pid: int) -> str:
            gone = f"exited after {self.exited_after_s[pid]:.1f} s" if pid in self.exited_after_s else \
                f"ALIVE ({self.left[pid][0]}) {self.left[pid][1][:100]}"
            return (f"  {pid}: {gone}; cpu {self.cpu_s.get(pid, 0):.2f} s, waited for a cpu "
                    f"{self.run_queue_wait_s.get(pid, 0):.2f} s")
        pids = sorted({*self.left, *self.exited_after_s})
        return f"watched {self.waited_s:.1f} s:\n" + "\n".join(line(pid) for pid in pids)


def wait_for_stop(tree: dict[int, str], within_s: float, poll_s: float = 0.25) -> StopReport:
    """Watch `tree` (just signalled) until all exited or `within_s` plus the tree's run-queue wait passed."""
    start = time.monotonic()
    clocks = {pid: ThreadClock(pid) for pid in tree}
    exited: dict[int, float] = {}
    while True:
        for pid in tree:
            if pid in exited:
                continue
            if not alive(pid):
                exited[pid] = time.monotonic() - start
            else:
                clocks[pid].read()
        waited = min(sum(clock.used_s()[1] for clock in clocks.values()), MAX_RUN_QUEUE_WAIT_S)
        if len(exited) == len(tree) or time.monotonic() - start > within_s + waited:
            break
        time.sleep(poll_s)
    left = {pid: (state(pid) or "?", cmd) for pid, cmd in tree.items() if pid not in exited}
    return StopReport(left, exited, {p: c.used_s()[0] for p, c in clocks.items()},
                      {p: c.used_s()[1] for p, c in clocks.items()}, time.monotonic() - start)
