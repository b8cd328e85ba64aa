"""Which files a raw source has (a file, a folder or a glob; any fsspec protocol), without reading them.

Apart from the readers; which files a folder contributes are the source format's suffixes, declared
by its class (data/formats/format_base.py), so the inventory is versioned with the format classes.
"""

from __future__ import annotations

import posixpath

import fsspec

from marin_assets.core.recipes import RecipeError
from marin_assets.data.formats.format_base import FORMATS, data_suffixes, suffixes_of
from marin_assets.data.sources.source_registry import SOURCES_RECIPE, SourceSpec, SourcesRegistry

HTML_SUFFIXES = (".html", ".htm", ".xhtml")
# Compressed files hold about this many times their size in records (gzip or zstd on prose and
# markup, Parquet with zstd): an estimate that sizes Spark partitions and never decides an output.
COMPRESSED_EXPANSION = 4
_COMPRESSED_SUFFIXES = (".gz", ".zst", ".parquet")
_GLOB_CHARS = "*?["


class UndeclaredFilesError(ValueError):
    """A folder holds data files of another format than the source declares: reading would skip them."""


def _is_glob(uri: str) -> bool:
    return any(c in uri for c in _GLOB_CHARS)


def require_known_formats(registry: SourcesRegistry) -> None:
    """Refuse a registry naming a format no class in data/formats/ registers (file, source, field, known names)."""
    for spec in registry.sources:
        if spec.format not in FORMATS:
            raise RecipeError(f"{SOURCES_RECIPE}: source '{spec.name}': format: unknown format '{spec.format}'; "
                              f"known: {', '.join(FORMATS.names())}")


def list_source_files(spec: SourceSpec) -> list[str]:
    """Sorted URIs of a source's files (a file, a folder, or a glob; local or any fsspec protocol)."""
    return list_source_files_and_skipped(spec)[0]


def list_source_files_and_skipped(spec: SourceSpec) -> tuple[list[str], list[str]]:
    """(files to read, files of a folder that are not data, e.g. README or _SUCCESS), both sorted URIs.

    A folder with data files of another format (say .jsonl.gz in a jsonl source) raises
    UndeclaredFilesError naming them, instead of skipping them silently.
    """
    fs, path = fsspec.core.url_to_fs(spec.uri)
    skipped: list[str] = []
    if _is_glob(path):
        found = [p for p in fs.glob(path) if fs.isfile(p)]
    elif fs.isdir(path):
        found, others = [], []
        for p in fs.find(path):
            (found if p.endswith(suffixes_of(spec.format)) else others).append(p)
        undeclared = sorted(p for p in others if p.endswith(data_suffixes()))
        if undeclared:
            names = ", ".join(posixpath.relpath(p, path) for p in undeclared[:10])
            more = f" and {len(undeclared) - 10} more" if len(undeclared) > 10 else ""
            raise UndeclaredFilesError(
                f"source {spec.name!r}: folder {spec.uri} has {len(undeclared)} data file(s) that are not "
                f"{spec.format} and would be skipped: {names}{more}. Declare them as their own source "
                "(or point the uri at a glob that names what to read)."
            )
        skipped = sorted(_with_protocol(fs, spec.uri, p) for p in others)
    elif fs.exists(path):
        found = [path]
    else:
        found = []
    return sorted(_with_protocol(fs, spec.uri, p) for p in found), skipped


def estimated_record_bytes(files: list[str]) -> int:
    """About how many bytes of records `files` hold: their sizes, compressed ones COMPRESSED_EXPANSION times."""
    total = 0
    for uri in files:
        fs, path = fsspec.core.url_to_fs(uri)
        total += fs.size(path) * (COMPRESSED_EXPANSION if path.endswith(_COMPRESSED_SUFFIXES) else 1)
    return total


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
