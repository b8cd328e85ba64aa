"""A Pipes message reader for local trainers that hands on only whole lines.

Dagster's file readers tail the message file with readline(), which returns what is there so far.
The trainer appends each message with one write, but a message of a few KB (the run summary) fills
the file page by page, so a reader that looks mid-write sees a line without its end and fails on it
("Unterminated string"), and the run then "exited without a result". Here a read without its newline
waits for the rest; a partial line left when the process has ended is reported, never parsed.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

import dagster as dg
from dagster_pipes import PipesDefaultMessageWriter

POLL_S = 0.01


def complete_lines(stream: TextIO, should_stop: Callable[[], bool], poll_s: float = POLL_S) -> Iterator[str]:
    """Lines of a growing file, each with its newline; a trailing fragment once stopped raises."""
    pending = ""
    while True:
        chunk = stream.readline()
        if chunk:
            pending += chunk
            if pending.endswith("\n"):
                yield pending
                pending = ""
            continue
        if should_stop():
            # stop is set after the writer exited: one last read takes whatever it wrote last
            rest = stream.read()
            if rest:
                pending += rest
                *lines, pending = pending.split("\n")
                yield from (line + "\n" for line in lines)
            if pending:
                raise ValueError(f"Pipes message file ends in an unterminated line ({len(pending)} characters)")
            return
        time.sleep(poll_s)


class CompleteLinesFileMessageReader(dg.PipesMessageReader):
    """Like Dagster's temp-file reader (one JSON message per line), reading whole lines only."""

    def __init__(self, include_stdio_in_messages: bool = False):
        self._include_stdio = include_stdio_in_messages
        self._path: str | None = None

    @contextmanager
    def read_messages(self, handler) -> Iterator[dict]:
        closed = threading.Event()
        with tempfile.TemporaryDirectory(prefix="marin-pipes-") as folder:
            self._path = os.path.join(folder, "messages")
            open(self._path, "w", encoding="utf-8").close()
            thread = threading.Thread(target=self._read, args=(handler, closed), daemon=True)
            thread.start()
            try:
                yield {PipesDefaultMessageWriter.FILE_PATH_KEY: self._path,
                       PipesDefaultMessageWriter.INCLUDE_STDIO_IN_MESSAGES_KEY: self._include_stdio}  # fmt: skip
            finally:
                closed.set()
                thread.join()

    def _read(self, handler, closed: threading.Event) -> None:
        try:
            with open(self._path, encoding="utf-8") as stream:
                for line in complete_lines(stream, closed.is_set):
                    handler.handle_message(json.loads(line))
        except Exception:
            handler.report_pipes_framework_exception(f"{type(self).__name__} reader thread", sys.exc_info())

    def no_messages_debug_text(self) -> str:
        return f"Attempted to read messages from file {self._path}."
