"""What keeps a training process honest about its surroundings (runs inside the trainer).

- It dies with its launcher: PR_SET_PDEATHSIG (Linux, via ctypes) turns the parent's death into a
  SIGTERM, and a watchdog thread also polls the parent pid (other OSes, and the race where the parent
  died before prctl ran).
- SIGTERM (what GKE sends a preempted pod) or SIGINT (Dagster forwarding a run termination) asks
  for a preemption stop: MaxText finishes the current step, writes a checkpoint of it and stops
  (`fastpath.maxtext.preemption_hook`). Repeated signals change nothing; no stop within `PREEMPT_GRACE_S`
  exits hard (a cluster's own SIGKILL after its grace period does the same).
- The watchdog heartbeats the run folder's lease; if another run took it over, this trainer exits
  at once rather than write into a folder it no longer owns. No failure of its own (a log write on a
  full disk) ends it: a dead watchdog would let the lease age while the trainer hangs on.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import sys
import threading
import time

from marin_assets.train.lease import HEARTBEAT_S, LeaseLost, RunLease

PR_SET_PDEATHSIG = 1
PREEMPT_GRACE_S = float(os.environ.get("MARIN_PREEMPT_GRACE_S", 300))
PARENT_ENV = "MARIN_TRAINER_PARENT_PID"
EXIT_LEASE_LOST = 75
EXIT_PREEMPTED_HARD = 143

log = logging.getLogger(__name__)


class Preemption:
    """Set by SIGTERM/SIGINT; MaxText's checkpoint hook polls it after every step."""

    def __init__(self):
        self.requested = threading.Event()
        self.signal_name: str | None = None
        self.checkpoint_step: int | None = None

    def _handle(self, signum, _frame):
        if self.requested.is_set():
            return  # repeats (parent-death signal + watchdog, or a retried kill) change nothing
        self.signal_name = signal.Signals(signum).name
        self.requested.set()
        threading.Thread(target=self._hard_stop_later, daemon=True).start()

    def _hard_stop_later(self):
        time.sleep(PREEMPT_GRACE_S)
        print(f"trainer: no checkpoint within {PREEMPT_GRACE_S:.0f}s of {self.signal_name}; exiting",
              file=sys.stderr, flush=True)
        os._exit(EXIT_PREEMPTED_HARD)

    def install(self) -> "Preemption":
        signal.signal(signal.SIGTERM, self._handle)
        signal.signal(signal.SIGINT, self._handle)
        return self


def die_with_parent(parent_pid: int | None) -> None:
    """Ask the kernel for a SIGTERM when the parent dies; if it already has, raise that SIGTERM now."""
    if parent_pid is None:
        return
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), signal.SIGTERM)


def start_watchdog(parent_pid: int | None, lease: RunLease | None, poll_s: float = 1.0,
                   stop: threading.Event | None = None) -> threading.Thread:
    """Parent-pid poll + lease heartbeat, in a daemon thread that no failure of its own ends.

    The trainer lets it die with the process; `stop` ends it earlier (a test must not leave it heartbeating
    and logging into later tests' closed streams)."""
    state = {"next_beat": 0.0, "parent_gone": False}
    stop = stop or threading.Event()

    def watch():
        while not stop.is_set():
            try:
                watch_once(parent_pid, lease, state)
            except Exception:  # noqa: BLE001 - e.g. its own log write on a full disk: keep heartbeating
                pass
            stop.wait(poll_s)

    thread = threading.Thread(target=watch, name="trainer-watchdog", daemon=True)
    thread.start()
    return thread


def watch_once(parent_pid: int | None, lease: RunLease | None, state: dict) -> None:
    if not state["parent_gone"] and parent_pid is not None and os.getppid() != parent_pid:
        state["parent_gone"] = True
        os.kill(os.getpid(), signal.SIGTERM)  # the launcher died: checkpoint and stop
    if lease is None or time.monotonic() < state["next_beat"] or state["parent_gone"]:
        return
    state["next_beat"] = time.monotonic() + HEARTBEAT_S  # first: a failing beat is retried next period
    try:
        lease.heartbeat(trainer_pid=os.getpid())
    except LeaseLost as exc:
        with contextlib.suppress(Exception):
            print(f"trainer: {exc}; exiting without writing more", file=sys.stderr, flush=True)
        os._exit(EXIT_LEASE_LOST)
    except OSError as exc:  # a storage blip must not kill training; the lease just ages
        log.warning("lease heartbeat failed: %s", exc)  # may itself fail on a full disk: watch() carries on


def parent_pid_from_env(environ=os.environ) -> int | None:
    value = environ.get(PARENT_ENV)
    return int(value) if value else None
