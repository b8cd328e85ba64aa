"""One storage helper: every asset writes under a root URI (local folder or gs://bucket/prefix).

Writes are atomic: an output is staged under a temporary name and only becomes visible when
committed, and at every instant either the old or the new output is complete (`core/commit.py`:
an atomic folder exchange locally; on object stores a versioned prefix and a `_COMMITTED` pointer
written last). Readers go through `committed_uri` (or `require_committed`, `read_json`, ...),
which follow the pointer, so a crash never leaves a half-written asset that looks complete.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import posixpath
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import fsspec

from marin_assets.core.commit import (
    COMMIT_MARKER,
    local_steps,
    object_store_steps,
    pointed_version,
    version_name,
)
from marin_assets.core.hashing import combine_hashes, sha256_stream

__all__ = ["COMMIT_MARKER", "VERSION_INFIX", "Storage", "StorageError", "StagedOutput"]
MANIFEST_NAME = "_provenance.json"
# Files that describe an output rather than being part of its content.
_META_FILES = {COMMIT_MARKER, MANIFEST_NAME}


class StorageError(RuntimeError):
    pass


# Set-aside folders (gc removes them once old): a staging folder a crashed write left behind, and a
# run's previous training state. The random suffix keeps two set-asides in one second apart.
STAGING_INFIX = ".staging-"
SUPERSEDED_INFIX = ".superseded-"
# Disk faults whose bare message ("No space left on device") does not say where.
PATH_ERRNOS = {errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EDQUOT, errno.EPERM}


def staging_name(final: str) -> str:
    return f"{final}{STAGING_INFIX}{uuid.uuid4().hex[:8]}"


def superseded_name(final: str) -> str:
    return f"{final}{SUPERSEDED_INFIX}{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"


@contextlib.contextmanager
def naming_the_path(action: str, path: str) -> Iterator[None]:
    """Re-raise a disk fault (full, read-only, no permission) as a StorageError that names the path."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in PATH_ERRNOS:
            raise
        where = exc.filename if exc.filename and str(exc.filename) not in path else None
        raise StorageError(
            f"{action} {path} failed: {os.strerror(exc.errno)}" + (f" (at {where})" if where else "")
        ) from exc


@dataclass(frozen=True)
class Storage:
    root_uri: str

    @property
    def fs(self) -> fsspec.AbstractFileSystem:
        fs, _ = fsspec.core.url_to_fs(self.root_uri)
        return fs

    @property
    def is_local(self) -> bool:
        return "://" not in self.root_uri or self.root_uri.startswith("file://")

    def uri(self, *parts: str) -> str:
        """Absolute URI of a path under the root (what MaxText, Spark and users are handed)."""
        rel = posixpath.join(*parts) if parts else ""
        if ".." in rel.split("/"):
            raise StorageError(f"path escapes the storage root: {rel!r}")
        root = self.root_uri.rstrip("/")
        if self.is_local:
            root = os.path.abspath(root.removeprefix("file://"))
        return f"{root}/{rel}" if rel else root

    def exists(self, *parts: str) -> bool:
        return self.fs.exists(self.committed_uri(*parts))

    def is_committed(self, *parts: str) -> bool:
        return self.fs.exists(self.uri(*parts, COMMIT_MARKER))

    def committed_uri(self, *parts: str) -> str:
        """Where the committed content of the output at `parts` lives (follows an object-store pointer).

        `parts` may also name a file or folder inside an output: the nearest committed ancestor's
        pointer is followed. Local outputs (and never-committed paths) are read where they are.
        """
        final = self.uri(*parts)
        if self.is_local:
            return final
        fs = self.fs
        for depth in range(len(parts), 0, -1):
            base = self.uri(*parts[:depth])
            try:
                text = fs.cat_file(f"{base}/{COMMIT_MARKER}").decode()
            except FileNotFoundError:
                continue
            version = pointed_version(base, text)
            if version is None:
                return final
            inner = posixpath.join(*parts[depth:]) if depth < len(parts) else ""
            return f"{version}/{inner}" if inner else version
        return final

    def follow(self, uri: str) -> str:
        """The content location of an output named by its absolute URI (what manifests record as
        output_uri / input_uris): the version its object-store pointer names, else the URI itself."""
        if self.is_local:
            return uri
        base = uri.rstrip("/")
        try:
            text = self.fs.cat_file(f"{base}/{COMMIT_MARKER}").decode()
        except FileNotFoundError:
            return uri
        return pointed_version(base, text) or uri

    @contextlib.contextmanager
    def atomic_dir(self, *parts: str) -> Iterator[StagedOutput]:
        """Yield a staging folder; on success it replaces `parts` and is marked committed.

        On an exception the staging folder is removed and the previous committed output (if any)
        stays untouched.
        """
        final = self.uri(*parts)
        # On object stores the staging prefix is already the version the pointer will name.
        staging = staging_name(final) if self.is_local else version_name(final)
        fs = self.fs
        try:
            with naming_the_path("writing", final):
                fs.makedirs(staging, exist_ok=True)
                yield StagedOutput(storage=self, path=staging, final_uri=final)
                for step in self.commit_steps(staging, final):
                    step.run()
        except BaseException:
            with contextlib.suppress(OSError):  # a read-only disk must not hide the real error
                if fs.exists(staging):
                    fs.rm(staging, recursive=True)
            raise

    def commit_steps(self, staging: str, final: str):
        """The commit as named steps (core/commit.py); stopping between any two keeps a whole output."""
        if self.is_local:
            return local_steps(self.fs, staging, final)
        return object_store_steps(self.fs, staging, final)

    def write_bytes_atomic(self, data: bytes, *parts: str) -> str:
        """Write one small file atomically (temp name, then move)."""
        final = self.uri(*parts)
        tmp = f"{final}.tmp-{uuid.uuid4().hex[:8]}"
        fs = self.fs
        with naming_the_path("writing", final):
            fs.makedirs(posixpath.dirname(final), exist_ok=True)
            with fs.open(tmp, "wb") as f:
                f.write(data)
            fs.mv(tmp, final)
        return final

    def write_json_atomic(self, obj, *parts: str) -> str:
        return self.write_bytes_atomic(json.dumps(obj, indent=2, sort_keys=True, default=str).encode(), *parts)

    def read_json(self, *parts: str):
        with self.fs.open(self.committed_uri(*parts), "r") as f:
            return json.load(f)

    def require_committed(self, *parts: str) -> str:
        """The committed output's content URI (follows the pointer), or a StorageError naming the path."""
        if not self.is_committed(*parts):
            raise StorageError(
                f"{self.uri(*parts)} is missing or was never committed; materialize its asset first"
            )
        return self.committed_uri(*parts)

    def list_files(self, *parts: str) -> list[str]:
        """Relative paths of the content files of an output folder (sorted, meta files excluded)."""
        return self.list_files_at(self.committed_uri(*parts))

    def list_files_at(self, base: str) -> list[str]:
        out = []
        for path in self.fs.find(base):
            rel = posixpath.relpath(_strip_protocol(path), _strip_protocol(base))
            if posixpath.basename(rel) not in _META_FILES:
                out.append(rel)
        return sorted(out)

    def content_hash(self, *parts: str) -> str:
        """Hash of every content file's relative path and bytes: the output's data version."""
        return self.content_hash_at(self.committed_uri(*parts))

    def content_hash_at(self, base: str) -> str:
        return folder_hash(base, self.list_files_at(base))


@dataclass(frozen=True)
class StagedOutput:
    """A folder being written: files go under `path`; readers will see them at `final_uri`."""

    storage: Storage
    path: str
    final_uri: str

    def join(self, *parts: str) -> str:
        return posixpath.join(self.path, *parts)

    def content_hash(self) -> str:
        return self.storage.content_hash_at(self.path)

    def write_json(self, obj, name: str) -> None:
        with self.storage.fs.open(self.join(name), "w") as f:
            json.dump(obj, f, indent=2, sort_keys=True, default=str)


def folder_hash(base: str, names: Iterable[str]) -> str:
    """The one folder hash: combine_hashes of (relative name, sha256 of its bytes), read through fsspec.

    Output data versions and the tokenizer's identity both use it, so a local folder and its gs://
    copy hash the same. A missing file raises FileNotFoundError.
    """
    return combine_hashes(file_hashes(base, names))


def file_hashes(base: str, names: Iterable[str]) -> list[tuple[str, str]]:
    """(relative name, sha256) of each named file under `base`, streamed through fsspec."""
    fs, path = fsspec.core.url_to_fs(base)
    named = []
    for rel in names:
        with fs.open(f"{path.rstrip('/')}/{rel}", "rb") as f:
            named.append((rel, sha256_stream(f)))
    return named


def _strip_protocol(path: str) -> str:
    return path.split("://", 1)[-1]
