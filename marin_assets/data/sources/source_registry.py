"""The sources registry: what raw corpora exist, where, in which format, under which license."""

from __future__ import annotations

import re
from enum import StrEnum
from functools import cache
from typing import ClassVar
from pathlib import Path

from pydantic import Field, field_validator

from marin_assets.core.recipes import NamedRegistry, Recipe, load_recipe
from marin_assets.data.sources.source_roots import allowed_roots, check_source_uri

SOURCES_RECIPE = "sources.yaml"


class SourceFormat(StrEnum):
    """The shipped formats' names, for code that treats one specially; what a source may name is FORMATS."""

    JSONL = "jsonl"
    JSONL_GZ = "jsonl.gz"
    JSONL_ZST = "jsonl.zst"
    PARQUET = "parquet"
    WARC = "warc"
    WARC_GZ = "warc.gz"
    HTML_DIR = "html_dir"  # a folder of .html files, one document each


class Provenance(Recipe):
    origin: str = Field(description="Where the data came from (URL, package, person)")
    version: str = Field(description="Version or snapshot date of the origin")
    checksum: str | None = Field(
        default=None,
        description="sha256 over the source's files (core.hashing.combine_hashes of (relative path, sha256)); "
        "the compliance check refuses the source when the files no longer match",
    )


class SourceSpec(Recipe):
    name: str
    uri: str = Field(description="File, folder, glob, or gs:// URI; relative paths are relative to the registry file")
    # Checked against the registered formats by data.sources.source_files.require_known_formats, not here:
    # every asset's code version reaches this module (licenses), and must not reach every format reader.
    format: str = Field(description="a registered format (data/formats/, one class each), e.g. jsonl, parquet, warc")
    text_field: str = "text"
    id_field: str | None = "id"
    url_field: str | None = "url"
    license: str = Field(description="SPDX license identifier, e.g. PSF-2.0, GPL-3.0-only, CC-BY-4.0")
    provenance: Provenance | None = None
    description: str = ""

    @field_validator("name")
    @classmethod
    def _partition_safe(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z0-9][a-z0-9_\-]*", value):
            raise ValueError("must be lowercase letters, digits, '_' or '-' (it names a partition and a folder)")
        return value


class SourcesRegistry(NamedRegistry):
    entries_field: ClassVar[str] = "sources"
    kind: ClassVar[str] = "source"
    allowed_roots: list[str] | None = Field(
        default=None,
        description="Folders / gs:// prefixes every source uri must resolve into (relative: to the registry "
        "file); default: the repo's sample_data. $MARIN_DATA_ROOTS entries are always allowed too",
    )
    sources: list[SourceSpec]


    def get(self, name: str) -> SourceSpec:
        return super().get(name)


def resolve_uri(uri: str, registry_path: Path) -> str:
    """Relative local URIs are relative to the registry file, so the repo can move."""
    if "://" in uri or uri.startswith("/"):
        return uri
    return str((registry_path.parent / uri).resolve())


@cache
def load_sources(path: str | Path = SOURCES_RECIPE) -> SourcesRegistry:
    from marin_assets.core.recipes import recipe_path

    full = recipe_path(path)
    registry = load_recipe(full, SourcesRegistry)
    roots = allowed_roots(registry.allowed_roots, full.parent)
    for spec in registry.sources:  # before anything reads a file: an entry must not escape the data roots
        check_source_uri(spec.name, spec.uri, roots, registry=full, base=full.parent)
    resolved = [s.model_copy(update={"uri": resolve_uri(s.uri, full)}) for s in registry.sources]
    # allowed_roots of a loaded registry: the effective, normalized roots (for require_files_within)
    return registry.model_copy(update={"sources": resolved, "allowed_roots": roots})
