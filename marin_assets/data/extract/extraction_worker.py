"""Extraction with a per-record time limit: the extractor runs in a child process that can be killed.

A deeply nested page can keep resiliparse or trafilatura busy in C code for minutes; neither a
thread nor signal.alarm (main thread only, and not delivered while C code runs) can stop that
inside a Spark Python worker. So one child process per partition does the extraction; the parent
waits on its pipe and, once the child has spent the limit in CPU time on the page, kills it (a
fresh one starts on the next page) and reports ExtractionTimeout. The limit is CPU time, not wall
time: on a loaded machine a page waits for a core, and a wall limit then quarantined pages that
pass on a quiet one (the Debian corpus holds five copies of a 2.5 MB page at 5.2-5.5 CPU s against
the 5 s default; three runs on one day rejected 18,915, 18,916 and 18,917 pages). CPU time still varies by a few percent, so a
page within that margin of the limit can still go either way. A child that spends no CPU at all
(blocked) is stopped after WALL_BACKSTOP times the limit.
Messages are length-prefixed pickles over stdin/stdout.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
import time

import psutil

from marin_assets.data.extract.extractor_choice import ExtractionSettings, build_extractor

HEADER = struct.Struct("<Q")
WARM_UP = "<html><body><p>warm-up</p></body></html>"
STARTUP_SECONDS = 120.0  # importing and building the extractor; not part of any record's limit
POLL_SECONDS = 0.1  # how often the child's CPU time is read while it works on a page
WALL_BACKSTOP = 10  # times the limit, in wall time, for a child that spends no CPU


class ExtractionTimeout(Exception):
    pass


class ExtractionError(Exception):
    """The extractor raised in the child (message: 'Type: text'), or the child died."""


class ExtractionWorker:
    def __init__(self, settings: ExtractionSettings, name: str, timeout_seconds: float):
        self._config = (settings.model_dump(mode="json"), name)
        self.timeout_seconds = timeout_seconds
        self._proc: subprocess.Popen | None = None
        self._ps: psutil.Process | None = None  # the child, for its CPU time

    def extract(self, html: str) -> str:
        if self._proc is None:
            self._start()
        try:
            cpu_before = cpu_seconds(self._ps)
            _write(self._proc.stdin, html)
            kind, payload = await_reply(self._proc, self._ps, cpu_before, self.timeout_seconds)
        except TimeoutError:
            self._kill()
            raise ExtractionTimeout(f"exceeded {self.timeout_seconds:g} s of CPU time") from None
        except (EOFError, BrokenPipeError, OSError) as exc:
            self._kill()
            raise ExtractionError(f"extraction worker died: {exc or type(exc).__name__}") from None
        if kind == "error":
            raise ExtractionError(payload)
        return payload

    def close(self) -> None:
        if self._proc is not None:
            self._proc.stdin.close()  # the child exits on end of input
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc.stdout.close()
            self._proc = None

    def _start(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self._proc = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      env=env)  # fmt: skip
        _write(self._proc.stdin, self._config)
        kind, payload = _read(self._proc.stdout, _past(time.monotonic() + STARTUP_SECONDS))
        if kind != "ready":
            self._kill()
            raise ExtractionError(f"extraction worker did not start: {payload}")
        self._ps = psutil.Process(self._proc.pid)

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            for pipe in (self._proc.stdin, self._proc.stdout):
                try:
                    pipe.close()
                except OSError:
                    pass
            self._proc = None


def _write(pipe, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    pipe.write(HEADER.pack(len(data)) + data)
    pipe.flush()


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def await_reply(proc: subprocess.Popen, ps: psutil.Process, cpu_before: float, limit_s: float):
    """The child's next message; TimeoutError once it has spent more than limit_s of CPU since
    cpu_before, or WALL_BACKSTOP * limit_s of wall time."""
    wall_deadline = time.monotonic() + WALL_BACKSTOP * limit_s

    def over_limit() -> bool:
        try:
            spent = cpu_seconds(ps) - cpu_before
        except psutil.NoSuchProcess:  # it died: reading its pipe reports that (EOFError)
            return False
        return spent > limit_s or time.monotonic() > wall_deadline

    return _read(proc.stdout, over_limit)


def _past(deadline: float):
    return lambda: time.monotonic() > deadline


def _read(pipe, give_up=None):
    """One message; TimeoutError once give_up() says so (asked every POLL_SECONDS while nothing
    arrives), EOFError when the other side has gone. No give_up: wait as long as it takes."""
    fd = pipe.fileno()
    chunks, need, header = [], HEADER.size, True
    while True:
        while need:
            if give_up is not None:
                while not select.select([fd], [], [], POLL_SECONDS)[0]:
                    if give_up():
                        raise TimeoutError
            chunk = os.read(fd, min(need, 1 << 20))
            if not chunk:
                raise EOFError("pipe closed")
            chunks.append(chunk)
            need -= len(chunk)
        data = b"".join(chunks)
        if not header:
            return pickle.loads(data)
        chunks, need, header = [], HEADER.unpack(data)[0], False


def _serve() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # stray prints from a library must not corrupt the message stream
    try:
        dump, name = _read(stdin)
        extractor = build_extractor(ExtractionSettings.model_validate(dump), name)
        extractor.extract(WARM_UP)  # lazy imports (a fallback's trafilatura) happen here, outside any limit
    except Exception as exc:
        _write(stdout, ("error", f"{type(exc).__name__}: {exc}"))
        return
    _write(stdout, ("ready", None))
    while True:
        try:
            html = _read(stdin)
        except EOFError:
            return
        try:
            _write(stdout, ("ok", extractor.extract(html)))
        except Exception as exc:  # reported to the parent, which quarantines the record
            _write(stdout, ("error", f"{type(exc).__name__}: {exc}"))


if __name__ == "__main__":
    _serve()
