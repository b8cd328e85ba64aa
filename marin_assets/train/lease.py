"""A run folder's lease: at most one trainer writes `training/<run>/` at a time.

The lease is `<run_dir>/_LEASE.json` = {token, run_id, pid, host, trainer_pid, heartbeat}. It is
created exclusively (fsspec mode "xb": O_EXCL locally; on GCS gcsfs sends `ifGenerationMatch=0`, so
the create fails if the object exists). The holder re-writes `heartbeat` every few seconds; before
each write it re-reads the file and stops if the token is no longer its own (someone took over).

A lease is stale when its heartbeat is older than `stale_after_s`, or when it was taken on this host
and neither its launcher pid nor its trainer pid is alive. A stale lease is taken over by claiming it
first (an exclusive create of `_LEASE.json.takeover-<its token>`: of racing takers one wins), removing
it only if it still holds that token, then creating a fresh one. The next run resumes from the
folder's last complete checkpoint.
Each create is read back: on a store that ignored the precondition (e.g. the GCS emulator in tests)
the last writer wins and the other acquirer sees a foreign token and waits.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field

import fsspec
from fsspec.implementations.local import LocalFileSystem

from marin_assets.core.processes import pid_alive

LEASE_FILE = "_LEASE.json"
STALE_AFTER_S = float(os.environ.get("MARIN_LEASE_STALE_S", 120))
HEARTBEAT_S = 5.0
PARTIAL_READ_RETRIES = 20  # ~2 s: a write of ~200 bytes in progress


class LeaseHeld(RuntimeError):
    pass


class LeaseLost(RuntimeError):
    pass


class LeaseUnreadable(RuntimeError):
    pass


@dataclass
class LeaseRecord:
    token: str
    run_id: str
    pid: int
    host: str
    heartbeat: float
    trainer_pid: int | None = None

    def describe(self, now: float | None = None) -> str:
        age = (now or time.time()) - self.heartbeat
        return (f"run {self.run_id} (pid {self.pid}, trainer pid {self.trainer_pid}, host {self.host}, "
                f"heartbeat {age:.0f}s ago)")


def is_stale(record: LeaseRecord, stale_after_s: float = STALE_AFTER_S, now: float | None = None) -> bool:
    now = time.time() if now is None else now
    if now - record.heartbeat > stale_after_s:
        return True
    if record.host == socket.gethostname():
        return not pid_alive(record.pid) and not pid_alive(record.trainer_pid)
    return False


@dataclass
class RunLease:
    """A lease this process holds (or takes over) on one run folder."""

    run_dir: str
    run_id: str
    record: LeaseRecord | None = None
    taken_over: LeaseRecord | None = None  # the stale lease this one replaced, if any
    _fs: fsspec.AbstractFileSystem = field(default=None, repr=False)

    def __post_init__(self):
        self._fs, self._dir = fsspec.core.url_to_fs(self.run_dir)
        self.path = f"{self._dir.rstrip('/')}/{LEASE_FILE}"

    def read(self) -> LeaseRecord | None:
        """The lease, or None. A local exclusive create makes the file before its bytes land: a read
        in between sees it empty or cut, so it reads again (a heartbeat replaces it whole: _replace)."""
        for attempt in range(PARTIAL_READ_RETRIES):
            try:
                data = self._fs.cat_file(self.path)
            except FileNotFoundError:
                return None
            try:
                return LeaseRecord(**json.loads(data))
            except ValueError:
                time.sleep(0.01 * (attempt + 1))
        raise LeaseUnreadable(f"{self.run_dir}: {LEASE_FILE} is not a lease record ({data[:80]!r}); "
                              "remove it by hand if no run writes this folder")

    def acquire(self, stale_after_s: float = STALE_AFTER_S, wait_s: float = 0.0, poll_s: float = 2.0) -> LeaseRecord:
        """Take the lease; take over a stale one; wait up to `wait_s` for a live one to go; else LeaseHeld."""
        deadline = time.monotonic() + wait_s
        self._fs.makedirs(self._dir, exist_ok=True)
        while True:
            record = LeaseRecord(uuid.uuid4().hex, self.run_id, os.getpid(), socket.gethostname(), time.time())
            if self._create(record):
                self.record = record
                return record
            current = self.read()
            if current is not None and is_stale(current, stale_after_s):
                if not self._move_aside(current):
                    time.sleep(min(poll_s, 0.05))  # another taker is removing it
                continue
            if current is not None and time.monotonic() >= deadline:
                raise LeaseHeld(f"{self.run_dir} is being written by {current.describe()}; "
                                f"it is taken over once its heartbeat is {stale_after_s:.0f}s old")
            time.sleep(poll_s)

    def heartbeat(self, trainer_pid: int | None = None) -> None:
        """Refresh the heartbeat; LeaseLost if another run took the lease over meanwhile."""
        current = self.read()
        if self.record is None or current is None or current.token != self.record.token:
            raise LeaseLost(f"lost the lease on {self.run_dir}: now held by "
                            f"{current.describe() if current else 'nobody'}")
        self.record.heartbeat = time.time()
        if trainer_pid is not None:
            self.record.trainer_pid = trainer_pid
        self._replace(json.dumps(asdict(self.record)).encode())

    def _replace(self, data: bytes) -> None:
        """Rewrite the lease whole. The trainer's heartbeat runs in a daemon thread, which the
        interpreter stops wherever it is at exit: a rewrite in place (truncate, then write) cut there
        left an empty lease that no later read or release could parse. Locally: a temporary file renamed
        over it (atomic on POSIX); an object store writes an object whole anyway."""
        if not isinstance(self._fs, LocalFileSystem):
            self._fs.pipe_file(self.path, data)
            return
        tmp = f"{self.path}.{os.getpid()}-{threading.get_ident()}.tmp"
        try:
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def release(self) -> None:
        current = self.read()
        if self.record is not None and current is not None and current.token == self.record.token:
            self._fs.rm(self.path)
        self.record = None

    def _create(self, record: LeaseRecord) -> bool:
        """Exclusive create; then read back, so a store that ignores the precondition still has one winner."""
        if self._fs.exists(self.path):
            return False
        try:
            with self._fs.open(self.path, "xb") as f:
                f.write(json.dumps(asdict(record)).encode())
        except FileExistsError:
            return False
        current = self.read()
        return current is not None and current.token == record.token

    def _move_aside(self, stale: LeaseRecord) -> bool:
        """Remove the stale lease, if it is still that one; False when another taker is doing it.

        Takers race: one that read the stale record late must not remove the fresh lease another
        taker has just written in its place. So each taker first claims this stale lease (its token)
        with an exclusive create, and removes the lease file only if it still holds that token.
        """
        claim = f"{self.path}.takeover-{stale.token}"
        try:
            with self._fs.open(claim, "xb") as f:
                f.write(self.run_id.encode())
        except FileExistsError:
            return False
        try:
            current = self.read()
            if current is not None and current.token == stale.token:
                self._fs.rm(self.path)
                self.taken_over = stale
        finally:
            self._fs.rm(claim)
        return True


def lease_from_env(environ=os.environ) -> RunLease | None:
    """In the trainer: the lease its launcher took (MARIN_LEASE_DIR/RUN/TOKEN), or None (bare run)."""
    run_dir = environ.get("MARIN_LEASE_DIR")
    if not run_dir:
        return None
    lease = RunLease(run_dir, environ.get("MARIN_LEASE_RUN", ""))
    current = lease.read()
    if current is None or current.token != environ.get("MARIN_LEASE_TOKEN"):
        raise LeaseLost(f"{run_dir}: the lease this trainer was started under is gone")
    lease.record = current
    return lease


def lease_env(lease: RunLease) -> dict[str, str]:
    return {"MARIN_LEASE_DIR": lease.run_dir, "MARIN_LEASE_RUN": lease.run_id, "MARIN_LEASE_TOKEN": lease.record.token}
