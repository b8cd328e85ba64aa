"""Entry point for reading raw sources: the records in one file (which files: data.source_files).

Readers stream, never raise for a bad record (they yield a QuarantinedRecord with a reason code),
and for a file that breaks part-way yield what they could read and one QuarantinedRecord for the
rest. Storage failures (network, permissions) do raise, so the run fails and can be retried.
"""

from __future__ import annotations

from collections.abc import Iterator

from marin_assets.data.formats.html_dir import read_html_file
from marin_assets.data.formats.jsonl import read_jsonl
from marin_assets.data.formats.parquet import read_parquet
from marin_assets.data.formats.records import QuarantinedRecord, RawRecord
from marin_assets.data.formats.streams import SourceReadError
from marin_assets.data.formats.warc import read_warc
from marin_assets.data.source_files import (
    UndeclaredFilesError, list_source_files, list_source_files_and_skipped, relative_name, source_root,
)
from marin_assets.data.sources import SourceFormat, SourceSpec

__all__ = ["RawRecord", "QuarantinedRecord", "SourceReadError", "UndeclaredFilesError", "list_source_files",
           "list_source_files_and_skipped", "read_file", "relative_name", "source_root"]  # fmt: skip

DEFAULT_MAX_RECORD_BYTES = 16 * 2**20
_COMPRESSION = {SourceFormat.JSONL: None, SourceFormat.JSONL_GZ: "gzip", SourceFormat.JSONL_ZST: "zstd"}


def read_file(
    path: str, spec: SourceSpec, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
) -> Iterator[RawRecord | QuarantinedRecord]:
    fmt = spec.format
    if fmt in _COMPRESSION:
        return read_jsonl(
            path,
            source=spec.name,
            compression=_COMPRESSION[fmt],
            text_field=spec.text_field,
            id_field=spec.id_field,
            url_field=spec.url_field,
            max_record_bytes=max_record_bytes,
        )
    if fmt == SourceFormat.PARQUET:
        return read_parquet(
            path,
            source=spec.name,
            text_field=spec.text_field,
            id_field=spec.id_field,
            url_field=spec.url_field,
            max_record_bytes=max_record_bytes,
        )
    if fmt in (SourceFormat.WARC, SourceFormat.WARC_GZ):
        return read_warc(path, source=spec.name, max_record_bytes=max_record_bytes)
    if fmt == SourceFormat.HTML_DIR:
        return read_html_file(
            path, source=spec.name, relative_name=relative_name(path, spec), max_record_bytes=max_record_bytes
        )
    raise ValueError(f"source {spec.name!r}: no reader for format {fmt!r}")
