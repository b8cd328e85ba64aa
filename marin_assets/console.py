"""A quiet terminal for long CLI commands: one line per run and a progress bar; the rest to a log file.

    with QuietConsole(log_path, total=n) as console:
        with console.capture():          # Dagster events, Spark and MaxText output -> the log file
            result = execute(...)
        console.finished("cleaned_documents", "handbook", ok=True, seconds=41.2)

Capture works on the file descriptors (1 and 2), not on sys.stdout, so output of child processes
(the MaxText trainer, Spark's JVM and Python workers) lands in the log file too. The progress bar and
the per-run lines go to a duplicate of the original terminal. `verbose=True` captures nothing.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from typing import Iterator, TextIO


class QuietConsole:
    def __init__(self, log_path: str | None, total: int = 0, verbose: bool = False):
        self.log_path, self.verbose = log_path, verbose
        self.total, self.done, self.failed = total, 0, 0
        self.started = time.monotonic()
        self._terminal: TextIO = sys.stdout
        self._log_fd: int | None = None
        self._progress = None
        self._task = None

    def __enter__(self) -> QuietConsole:
        sys.stdout.flush()
        if not self.verbose and self.log_path:
            os.makedirs(os.path.dirname(self.log_path) or ".", exist_ok=True)
            self._log_fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            self._terminal = os.fdopen(os.dup(1), "w", buffering=1)
            self._start_bar()
        return self

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.stop()
        if self._log_fd is not None:
            os.close(self._log_fd)
            self._terminal.flush()

    def _start_bar(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(file=self._terminal, force_terminal=self._terminal.isatty())
        self._progress = Progress(TextColumn("[marin]"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("{task.fields[failed]} failed"), TimeElapsedColumn(),
                                  console=console, transient=True, disable=not self._terminal.isatty())
        self._task = self._progress.add_task("runs", total=self.total or None, failed=0)
        self._progress.start()

    def say(self, line: str) -> None:
        """A line for the person at the terminal (above the progress bar)."""
        if self._progress is not None and self._progress.console.is_terminal:
            self._progress.console.print(line, markup=False, highlight=False)
        else:
            print(line, file=self._terminal, flush=True)

    def grow(self, extra: int) -> None:
        """More runs became due (re-planning after upstream outputs changed)."""
        self.total += extra
        if self._progress is not None:
            self._progress.update(self._task, total=self.total)

    @contextmanager
    def capture(self) -> Iterator[None]:
        """Send everything written to fds 1 and 2 to the log file while the block runs."""
        if self._log_fd is None:
            yield
            return
        sys.stdout.flush(), sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(self._log_fd, 1), os.dup2(self._log_fd, 2)
        try:
            yield
        finally:
            sys.stdout.flush(), sys.stderr.flush()
            os.dup2(saved[0], 1), os.dup2(saved[1], 2)
            os.close(saved[0]), os.close(saved[1])

    def finished(self, asset: str, partition: str | None, ok: bool, seconds: float, note: str = "") -> None:
        self.done += 1
        self.failed += 0 if ok else 1
        where = f" [{partition}]" if partition else ""
        outcome = "ok" if ok else "FAILED"
        extra = f"  {note}" if note else ""
        self.say(f"[marin] {outcome:6} {asset}{where}  {seconds:6.1f}s  ({self.done}/{self.total}){extra}")
        if self._progress is not None:
            self._progress.update(self._task, completed=self.done, failed=self.failed)

    def elapsed(self) -> float:
        return time.monotonic() - self.started
