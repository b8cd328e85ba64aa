"""Waiting politely: a command that waits (e.g. for a pool slot) stops on SIGTERM like on Ctrl-C.

`stop_on_sigterm()` turns SIGTERM into `Stopped` (a KeyboardInterrupt, which Dagster already treats as
"interrupted": the run is marked failed, its slots freed) in the main thread, for the block's duration.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

EXIT_STOPPED = 143  # 128 + SIGTERM, what a shell reports for a process SIGTERM ended


class Stopped(KeyboardInterrupt):
    pass


@contextlib.contextmanager
def stop_on_sigterm() -> Iterator[None]:
    def _raise(signum, _frame):
        raise Stopped(f"stopped by {signal.Signals(signum).name}")

    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
