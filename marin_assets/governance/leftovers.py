"""Leftovers under a storage root: staging folders of crashed writes, superseded run state, old versions.

`find_leftovers` lists folders whose name carries a set-aside infix (storage.STAGING_INFIX,
SUPERSEDED_INFIX, commit.VERSION_INFIX) and whose newest file is older than the retention;
`remove_leftovers` deletes them and returns what it removed. A committed output is never touched:
only set-aside names match, a version its output's commit pointer names is kept, and a superseded
folder whose original path is gone (an interrupted commit: it may be the only copy) is kept.
"""

from __future__ import annotations

import os
import posixpath
import time
from dataclasses import dataclass

from marin_assets.core.commit import COMMIT_MARKER, VERSION_INFIX, pointed_version
from marin_assets.core.storage import STAGING_INFIX, SUPERSEDED_INFIX, Storage

DEFAULT_RETENTION_HOURS = float(os.environ.get("MARIN_GC_RETENTION_HOURS", 72))
MAX_DEPTH = 4  # set-asides sit next to their output: <stage>/<name>[/<part>] under the root


@dataclass(frozen=True)
class Leftover:
    path: str
    kind: str            # "staging" | "superseded" | "version"
    age_hours: float
    size_bytes: int

    def describe(self) -> str:
        return f"{self.kind:10s} {self.age_hours:8.1f} h {self.size_bytes / 1e6:10.1f} MB  {self.path}"


def _kind(name: str) -> str | None:
    if STAGING_INFIX in name:
        return "staging"
    if SUPERSEDED_INFIX in name:
        return "superseded"
    if VERSION_INFIX in name:
        return "version"
    return None


def _original(path: str) -> str:
    name = posixpath.basename(path)
    for infix in (STAGING_INFIX, SUPERSEDED_INFIX, VERSION_INFIX):
        if infix in name:
            return posixpath.join(posixpath.dirname(path), name.split(infix, 1)[0])
    return path


def _is_current_version(fs, path: str) -> bool:
    """True when the commit pointer of the version's output names this version (never a leftover)."""
    original = _original(path)
    try:
        text = fs.cat_file(f"{original}/{COMMIT_MARKER}").decode()
    except FileNotFoundError:
        return False
    current = pointed_version(original, text)
    return current is not None and current.rstrip("/") == path.rstrip("/")


def _newest_and_size(fs, path: str) -> tuple[float, int]:
    newest, size = _mtime(fs.info(path)), 0
    for info in fs.find(path, detail=True).values():
        newest = max(newest, _mtime(info))
        size += int(info.get("size") or 0)
    return newest, size


def _mtime(info: dict) -> float:
    value = info.get("mtime") or info.get("updated") or info.get("LastModified") or 0
    return value.timestamp() if hasattr(value, "timestamp") else float(value or 0)


def find_leftovers(storage: Storage, retention_hours: float = DEFAULT_RETENTION_HOURS,
                   now: float | None = None) -> list[Leftover]:
    now = time.time() if now is None else now
    fs, root = storage.fs, storage.uri()
    if not fs.exists(root):
        return []
    found, frontier = [], [(root, 0)]
    while frontier:
        folder, depth = frontier.pop()
        for info in fs.ls(folder, detail=True):
            path = info["name"]
            kind = _kind(posixpath.basename(path.rstrip("/")))
            if kind is not None:
                if kind == "superseded" and not fs.exists(_original(path)):
                    continue
                if kind == "version" and _is_current_version(fs, path):
                    continue
                newest, size = _newest_and_size(fs, path)
                age = (now - newest) / 3600
                if age >= retention_hours:
                    found.append(Leftover(path, kind, round(age, 2), size))
            elif info["type"] == "directory" and depth + 1 < MAX_DEPTH:
                frontier.append((path, depth + 1))
    return sorted(found, key=lambda leftover: leftover.path)


def remove_leftovers(storage: Storage, leftovers: list[Leftover]) -> list[Leftover]:
    fs, removed = storage.fs, []
    for leftover in leftovers:
        if _kind(posixpath.basename(leftover.path.rstrip("/"))) is None:  # defence in depth
            raise ValueError(f"refusing to remove {leftover.path}: not a set-aside name")
        fs.rm(leftover.path, recursive=fs.isdir(leftover.path))
        removed.append(leftover)
    return removed
