"""Fingerprints of source locations, for the sensor that re-ingests only sources that changed.

A fingerprint hashes each file's (relative path, size, version stamp); the stamp is the object
store's generation/etag where there is one, else the modification time. Listing goes through
fsspec, so local folders and gs:// prefixes are watched by the same code.
"""

from __future__ import annotations

import json

import fsspec

from marin_assets.core.hashing import hash_json
from marin_assets.data.sources.source_files import list_source_files, relative_name
from marin_assets.data.sources.source_registry import SourceSpec

_STAMP_KEYS = ("generation", "etag", "ETag", "md5Hash", "mtime", "updated", "LastModified", "last_modified")


def file_stamp(info: dict) -> str:
    for key in _STAMP_KEYS:
        if info.get(key) is not None:
            return f"{key}={info[key]}"
    return ""


def source_fingerprint(spec: SourceSpec) -> str | None:
    """Hash of the source's file listing; None when the source has no files (nothing to ingest)."""
    entries = []
    for uri in list_source_files(spec):
        fs, path = fsspec.core.url_to_fs(uri)
        info = fs.info(path)
        entries.append((relative_name(uri, spec), info.get("size"), file_stamp(info)))
    return hash_json(sorted(entries)) if entries else None


def changed_sources(previous: dict[str, str], current: dict[str, str | None]) -> list[str]:
    """Sources whose fingerprint differs from the last one acted on (a source that lost all its
    files counts as changed once it had some; one that never had any does not)."""
    return sorted(
        name
        for name, fingerprint in current.items()
        if fingerprint != previous.get(name) and not (fingerprint is None and name not in previous)
    )


def peers_to_reclean(changed: list[str], current: dict[str, str | None], dedup_scope: str) -> list[str]:
    """The unchanged sources (with files) whose cleaned table a change elsewhere makes stale: every one
    under dedup scope `global` (each partition dedups against all sources), none under `source`."""
    if dedup_scope != "global" or not changed:
        return []
    return sorted(name for name, fingerprint in current.items() if fingerprint is not None and name not in changed)


def parse_cursor(cursor: str | None) -> dict[str, str | None]:
    return json.loads(cursor) if cursor else {}


def dump_cursor(fingerprints: dict[str, str | None]) -> str:
    return json.dumps(dict(sorted(fingerprints.items())))
