"""Is a committed output still what was committed? Its manifest's file inventory, checked on read.

A commit marker says an output was once complete; it says nothing about files deleted or truncated
since. So every manifest records the output's content files with their sizes (and, where the file
bytes are the data version, their hash), and a consumer checks that inventory before it reads:
file list + sizes always (one listing), the full content hash where the output is small enough
(`MARIN_VERIFY_HASH_MAX_BYTES`, default 256 MiB). A damaged output is refused with the names of
what is missing or changed, so it never silently feeds a downstream asset.
Kept apart from storage.py (its commit protocol changes independently).
"""

from __future__ import annotations

import json
import os
import posixpath

import fsspec

from marin_assets.core.storage import COMMIT_MARKER, MANIFEST_NAME, Storage, StorageError, folder_hash

INVENTORY_FIELD = "content"  # manifest field: {"files": {rel: size}, "hash": folder hash or None}
HASH_MAX_ENV = "MARIN_VERIFY_HASH_MAX_BYTES"
DEFAULT_HASH_MAX_BYTES = 256 * 2**20
_META = {COMMIT_MARKER, MANIFEST_NAME}
SHOWN = 5  # names listed per kind of damage


class DamagedOutput(StorageError):
    """A committed output whose files no longer match its manifest's inventory."""


def file_sizes(base: str) -> dict[str, int]:
    """{relative path: size} of an output folder's content files (meta files excluded), one listing."""
    fs, path = fsspec.core.url_to_fs(base)
    path = path.rstrip("/")
    found = fs.find(path, detail=True)
    sizes = {}
    for full, info in found.items():
        rel = posixpath.relpath(full.split("://", 1)[-1], path)
        if posixpath.basename(rel) not in _META:
            sizes[rel] = int(info.get("size") or 0)
    return dict(sorted(sizes.items()))


def inventory(base: str, files_hash: str | None) -> dict:
    """What the manifest records about the content files of the staged output at `base`."""
    return {"files": file_sizes(base), "hash": files_hash}


def hash_limit() -> int:
    value = os.environ.get(HASH_MAX_ENV)
    if value is None:
        return DEFAULT_HASH_MAX_BYTES
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{HASH_MAX_ENV}={value!r} is not a number of bytes") from None


def damage(uri: str, manifest: dict, full_hash: bool | None = None) -> list[str]:
    """What is wrong with the committed output at `uri` against its manifest ([] = intact or unrecorded).

    `full_hash`: None hashes the files when they total at most `hash_limit()` bytes.
    """
    recorded = manifest.get(INVENTORY_FIELD)
    if not isinstance(recorded, dict) or not isinstance(recorded.get("files"), dict):
        return []  # written before inventories were recorded: the commit marker is all there is
    expected: dict[str, int] = recorded["files"]
    actual = file_sizes(uri)
    missing = sorted(set(expected) - set(actual))
    resized = sorted(rel for rel in set(expected) & set(actual) if actual[rel] != expected[rel])
    problems = []
    if missing:
        problems.append(f"{len(missing)} file(s) missing: {_names(missing)}")
    if resized:
        problems.append(f"{len(resized)} file(s) changed size: "
                        + _names([f"{r} ({expected[r]} -> {actual[r]} bytes)" for r in resized]))
    if problems or not recorded.get("hash"):
        return problems
    if full_hash is None:
        full_hash = sum(expected.values()) <= hash_limit()
    if full_hash and folder_hash(uri, list(expected)) != recorded["hash"]:
        problems.append("file contents differ from the committed content hash")
    return problems


def verify_committed(storage: Storage, *parts: str, full_hash: bool | None = None) -> str:
    """The URI of a committed, undamaged output; a DamagedOutput naming what is wrong otherwise."""
    uri = storage.require_committed(*parts)
    if not storage.fs.exists(f"{uri}/{MANIFEST_NAME}"):
        return uri  # committed by hand or by a tool that records nothing: the marker is all there is
    problems = damage(uri, storage.read_json(*parts, MANIFEST_NAME), full_hash)
    if problems:
        raise DamagedOutput(f"{uri} is damaged since it was committed: {'; '.join(problems)}. "
                            "Rematerialize it (`marin materialize-all` reruns it) before reading it")
    return uri


def output_damage(uri: str, full_hash: bool = False) -> list[str]:
    """damage() of the output at `uri` read from its own manifest; cheap by default (list + sizes)."""
    fs, path = fsspec.core.url_to_fs(uri)
    if not fs.exists(path):
        return [f"{uri} is gone"]
    manifest = f"{path.rstrip('/')}/{MANIFEST_NAME}"
    if not fs.exists(manifest):
        return []  # nothing recorded to check against
    with fs.open(manifest, "r") as f:
        return damage(uri, json.load(f), full_hash)


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:SHOWN])
    return shown + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")
