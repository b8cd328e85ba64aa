"""Which files a raw source has (a file, a folder or a glob; any fsspec protocol), without reading them.

Apart from the readers so that listing and hashing a source (raw_corpus, the sensor, compliance)
is not versioned with the record parsers: editing a format must not make the inventory stale.
"""

from __future__ import annotations

import posixpath

import fsspec

from marin_assets.data.sources import SourceFormat, SourceSpec

HTML_SUFFIXES = (".html", ".htm", ".xhtml")

# Files a folder URI contributes, by format (other files, e.g. README or _SUCCESS, are not data).
SUFFIXES = {
    SourceFormat.JSONL: (".jsonl",),
    SourceFormat.JSONL_GZ: (".jsonl.gz",),
    SourceFormat.JSONL_ZST: (".jsonl.zst",),
    SourceFormat.PARQUET: (".parquet",),
    SourceFormat.WARC: (".warc",),
    SourceFormat.WARC_GZ: (".warc.gz",),
    SourceFormat.HTML_DIR: HTML_SUFFIXES,
}
_GLOB_CHARS = "*?["


def _is_glob(uri: str) -> bool:
    return any(c in uri for c in _GLOB_CHARS)


def list_source_files(spec: SourceSpec) -> list[str]:
    """Sorted URIs of a source's files (a file, a folder, or a glob; local or any fsspec protocol)."""
    fs, path = fsspec.core.url_to_fs(spec.uri)
    if _is_glob(path):
        found = [p for p in fs.glob(path) if fs.isfile(p)]
    elif fs.isdir(path):
        found = [p for p in fs.find(path) if p.endswith(SUFFIXES[spec.format])]
    elif fs.exists(path):
        found = [path]
    else:
        found = []
    return sorted(_with_protocol(fs, spec.uri, p) for p in found)


def source_root(spec: SourceSpec) -> str:
    """The folder a source's relative file names are relative to (the non-glob prefix of its URI)."""
    uri = spec.uri.rstrip("/")
    if _is_glob(uri):
        prefix = uri[: min(uri.index(c) for c in _GLOB_CHARS if c in uri)]
        return prefix.rstrip("/") if prefix.endswith("/") else posixpath.dirname(prefix)
    fs, path = fsspec.core.url_to_fs(uri)
    return uri if fs.isdir(path) else posixpath.dirname(uri)


def relative_name(path: str, spec: SourceSpec) -> str:
    return posixpath.relpath(_strip(path), _strip(source_root(spec)))


def _with_protocol(fs: fsspec.AbstractFileSystem, uri: str, path: str) -> str:
    return path if "://" not in uri or uri.startswith("file://") else fs.unstrip_protocol(path)


def _strip(uri: str) -> str:
    return uri.removeprefix("file://").split("://", 1)[-1]
