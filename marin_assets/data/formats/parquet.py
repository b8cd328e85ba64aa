"""Parquet: one document per row, read in small batches of the needed columns only."""

from __future__ import annotations

from collections.abc import Iterator

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from marin_assets.data.formats import records as r
from marin_assets.data.formats.records import QuarantinedRecord, RawRecord
from marin_assets.data.formats.format_base import FileFormat, register_format
from marin_assets.data.sources.source_registry import SourceSpec

_BATCH_ROWS = 256


def read_parquet(
    path: str,
    *,
    source: str,
    text_field: str,
    id_field: str | None,
    url_field: str | None,
    max_record_bytes: int,
) -> Iterator[RawRecord | QuarantinedRecord]:
    """Offsets are row numbers. A file Parquet cannot open is quarantined whole, naming the error."""
    row = 0
    with fsspec.open(path, "rb") as raw:
        try:
            parquet = pq.ParquetFile(raw)
            names = parquet.schema_arrow.names
            if text_field not in names:
                yield r.quarantine(path, 0, r.MISSING_FIELD, f"column {text_field!r} (has {names})")
                return
            columns = [c for c in (text_field, id_field, url_field) if c and c in names]
            for batch in parquet.iter_batches(batch_size=_BATCH_ROWS, columns=columns):
                for values in batch.to_pylist():
                    yield _row_record(values, path, row, source, text_field, id_field, url_field, max_record_bytes)
                    row += 1
        except (pa.ArrowException, OSError) as exc:
            yield r.quarantine(path, row, r.UNREADABLE_FILE, f"{type(exc).__name__}: {exc} (row {row})")
            return
    if row == 0:
        yield r.quarantine(path, 0, r.EMPTY_FILE)


def _row_record(values, path, row, source, text_field, id_field, url_field, max_record_bytes):
    content = values.get(text_field)
    if isinstance(content, bytes):
        try:
            content = content.decode("utf-8")
        except UnicodeDecodeError as exc:
            return r.quarantine(path, row, r.INVALID_UTF8, f"{exc.reason} at byte {exc.start}", content)
    if not isinstance(content, str):
        return r.quarantine(path, row, r.BAD_FIELD, f"{text_field} is {type(content).__name__}")
    size = len(content.encode("utf-8"))
    if size > max_record_bytes:
        return r.quarantine(path, row, r.RECORD_TOO_LARGE, f"{size} bytes", content[: r.EXCERPT_CHARS])
    record_id = values.get(id_field) if id_field else None
    url = values.get(url_field) if url_field else None
    return RawRecord(
        id=str(record_id) if record_id is not None else r.derived_id(source, path, row),
        url=str(url) if url is not None else None,
        content=content,
        content_type="text",
        metadata={},
        raw_length=size,
        file=path,
        offset=row,
    )


@register_format
class Parquet(FileFormat):
    """One record per row (the file's metadata counts them)."""

    suffixes = {"parquet": (".parquet",)}

    def read(self, path: str, spec: SourceSpec, max_record_bytes: int) -> Iterator[RawRecord | QuarantinedRecord]:
        return read_parquet(path, source=spec.name, text_field=spec.text_field, id_field=spec.id_field,
                            url_field=spec.url_field, max_record_bytes=max_record_bytes)  # fmt: skip

    def count(self, uri: str, spec: SourceSpec) -> int:
        with fsspec.open(uri, "rb") as f:
            try:
                meta = pq.ParquetFile(f)
            except (pa.ArrowException, OSError):
                return 1  # unopenable: one quarantined record
            if spec.text_field not in meta.schema_arrow.names:
                return 1  # the whole file is quarantined as missing its text column
            return meta.metadata.num_rows or 1
