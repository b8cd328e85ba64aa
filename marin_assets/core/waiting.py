"""Waiting politely: a command that waits (e.g. for a pool slot) stops on SIGTERM like on Ctrl-C.

`stop_on_sigterm()` turns SIGTERM into `Stopped` (a KeyboardInterrupt) in the main thread for the
block's duration (e.g. while `marin materialize-all` waits for a pool slot, marin_assets.pool_slots).
Inside a Dagster run, Dagster captures the signal itself and ends the run instead; whoever sees a signal calls
`note_signal()`, and the command calls `raise_if_signalled()` after each run, so it stops too rather
than go on with the next one.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

EXIT_STOPPED = 143  # 128 + SIGTERM, what a shell reports for a process SIGTERM ended
_signalled = threading.Event()


class Stopped(KeyboardInterrupt):
    pass


def note_signal() -> None:
    _signalled.set()


def raise_if_signalled() -> None:
    if _signalled.is_set():
        raise Stopped("stopped by a signal")


@contextlib.contextmanager
def stop_on_sigterm() -> Iterator[None]:
    def _raise(signum, _frame):
        note_signal()
        raise Stopped(f"stopped by {signal.Signals(signum).name}")

    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
