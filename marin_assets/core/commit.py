"""How a staged output becomes the committed one without a moment where neither version is complete.

Local disk: the staging folder and the committed folder trade places in one atomic
`renameat2(RENAME_EXCHANGE)`, then the old one (now under the staging name) is removed. Object
stores (no rename): each version is written under its own prefix `<final>.v-<id>` and the commit
is one small pointer object `<final>/_COMMITTED` naming it, written last; readers follow the
pointer (`Storage.committed_uri`), and the version it no longer names is removed at once (or by
`marin gc` if a crash intervenes). A commit is a list of named steps so the tests can stop it
between any two of them and check that the old or the new output is whole.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import posixpath
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

COMMIT_MARKER = "_COMMITTED"
VERSION_INFIX = ".v-"
LEGACY_MARKER = "ok\n"  # what a local commit (and a pre-pointer object-store commit) writes

_AT_FDCWD = -100
_NO_EXCHANGE = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP}
_RENAME_EXCHANGE = 2


@dataclass(frozen=True)
class Step:
    name: str
    run: Callable[[], None]


def version_name(final: str) -> str:
    return f"{final}{VERSION_INFIX}{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"


def pointer_text(version_uri: str) -> str:
    return json.dumps({"version": posixpath.basename(version_uri.rstrip("/"))}) + "\n"


def pointed_version(final: str, marker_text: str) -> str | None:
    """The versioned prefix a pointer names, or None for a marker whose content sits at `final` itself."""
    if not marker_text.lstrip().startswith("{"):
        return None
    name = json.loads(marker_text).get("version")
    if not name or "/" in name or VERSION_INFIX not in name:
        raise ValueError(f"{final}/{COMMIT_MARKER} is not a valid commit pointer: {marker_text!r}")
    return posixpath.join(posixpath.dirname(final.rstrip("/")), name)


def exchange(a: str, b: str) -> None:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE through libc)."""
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available in this C library", a)
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), a, None, b)


def local_steps(fs, staging: str, final: str) -> list[Step]:
    """Marker into staging, then swap it with the committed folder (or rename when there is none)."""

    def mark():
        with open(os.path.join(staging, COMMIT_MARKER), "w") as f:
            f.write(LEGACY_MARKER)

    def swap():
        if os.path.exists(final):
            try:
                exchange(staging, final)  # the old version now lives under the staging name
            except OSError as exc:
                if exc.errno not in _NO_EXCHANGE:
                    raise
                # A filesystem without RENAME_EXCHANGE: two renames. Between them the old version sits
                # under a superseded name that gc keeps while `final` is missing (governance/leftovers.py).
                old = f"{final}.superseded-{uuid.uuid4().hex[:8]}"
                os.rename(final, old)
                os.rename(staging, final)
                os.rename(old, staging)
        else:
            os.makedirs(os.path.dirname(final), exist_ok=True)
            os.rename(staging, final)

    def drop_old():
        if os.path.exists(staging):
            fs.rm(staging, recursive=True)

    return [Step("mark staging", mark), Step("swap into place", swap), Step("remove old version", drop_old)]


def object_store_steps(fs, version: str, final: str) -> list[Step]:
    """Write the pointer naming `version`, then remove what the old pointer named."""
    marker = f"{final}/{COMMIT_MARKER}"
    previous: dict[str, object] = {}

    def read_old():
        previous["text"] = fs.cat_file(marker).decode() if fs.exists(marker) else None

    def switch():
        with fs.open(marker, "w") as f:  # one object PUT: readers see the old or the new pointer
            f.write(pointer_text(version))

    def drop_old():
        text = previous["text"]
        if text is None:
            return
        old = pointed_version(final, text)
        if old is not None:
            if old.rstrip("/") != version.rstrip("/") and fs.exists(old):
                fs.rm(old, recursive=True)
            return
        for path in fs.find(final):  # a pre-pointer commit: its files sat under `final` itself
            if posixpath.basename(path) != COMMIT_MARKER:
                fs.rm(path)

    return [Step("read old pointer", read_old), Step("switch pointer", switch), Step("remove old version", drop_old)]
