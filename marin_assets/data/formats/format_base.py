"""A raw file format is one class: its names and file suffixes, its reader, its record counter; FORMATS finds it.

A source's `format:` in sources.yaml names a registered format. The class reads a file into records
(streamed; a bad record becomes a QuarantinedRecord with a reason, never an exception; text repairs
are counted under `repairs.REPAIRS_KEY`) and counts the file's records independently of the reader
(record_counts.conservation compares the two). Every module of this package is imported on the first
lookup (core.registries), so a new format is one new module here with a `@register_format` class.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from marin_assets.core.registries import Registry

FORMATS = Registry("format", package="marin_assets.data.formats")


class FileFormat:
    """Subclasses set `suffixes` ({format name: the file suffixes a folder of that format contributes})
    and implement `read` and `count`; `repairs`: the repair reasons its records may carry (repairs.py)."""

    suffixes: ClassVar[dict[str, tuple[str, ...]]]
    repairs: ClassVar[tuple[str, ...]] = ()

    def read(self, path: str, spec: Any, max_record_bytes: int) -> Iterator:
        """The file's records (RawRecord | QuarantinedRecord | IgnoredRecord), for a source `spec`."""
        raise NotImplementedError

    def count(self, uri: str, spec: Any) -> int:
        """How many records the file holds, by the format's convention, without the reader."""
        raise NotImplementedError


def register_format(cls: type[FileFormat]) -> type[FileFormat]:
    """Class decorator: one instance, registered under each of its format names."""
    FORMATS.register(*cls.suffixes)(cls())
    return cls


def format_for(name: str, source: str) -> FileFormat:
    return FORMATS.lookup(name, f"source '{source}': ")


def suffixes_of(name: str) -> tuple[str, ...]:
    return FORMATS.lookup(name).suffixes[name]


def data_suffixes() -> tuple[str, ...]:
    """Every registered format's suffixes, longest first (a folder's data files of any format)."""
    found = {s for fmt in FORMATS.values() for suffixes in fmt.suffixes.values() for s in suffixes}
    return tuple(sorted(found, key=len, reverse=True))
