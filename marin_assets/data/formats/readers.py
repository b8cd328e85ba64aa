"""Entry point for reading raw sources: the records in one file (which files: data.source_files).

Readers stream, never raise for a bad record (they yield a QuarantinedRecord with a reason code),
and for a file that breaks part-way yield what they could read and one QuarantinedRecord for the
rest. Storage failures (network, permissions) do raise, so the run fails and can be retried.
"""

from __future__ import annotations

from collections.abc import Iterator

from marin_assets.data.formats.format_base import format_for
from marin_assets.data.formats.records import QuarantinedRecord, RawRecord
from marin_assets.data.formats.streams import SourceReadError
from marin_assets.data.sources.source_files import (
    UndeclaredFilesError, list_source_files, list_source_files_and_skipped, relative_name, source_root,
)
from marin_assets.data.sources.source_registry import SourceSpec

__all__ = ["RawRecord", "QuarantinedRecord", "SourceReadError", "UndeclaredFilesError", "list_source_files",
           "list_source_files_and_skipped", "read_file", "relative_name", "source_root"]  # fmt: skip

DEFAULT_MAX_RECORD_BYTES = 16 * 2**20


def read_file(
    path: str, spec: SourceSpec, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
) -> Iterator[RawRecord | QuarantinedRecord]:
    """The file's records, by the registered format the source names (data/formats/, one class each)."""
    return format_for(spec.format, spec.name).read(path, spec, max_record_bytes)
