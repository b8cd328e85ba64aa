"""How many records each raw file holds, counted by format without the readers or the cleaner.

counts_conserve compares this count with the rows the cleaning job wrote (kept + rejected +
quarantined), so a reader or a cleaner that drops records fails the check. The counters follow
the readers' documented conventions, not their code: one record per JSONL line (blank and
over-long lines included), per Parquet row (file metadata), per WARC response/resource record,
per HTML file; an empty or unopenable file is one (quarantined) record, and a file whose
compression breaks part-way counts what decoded before the break plus one for the rest.

A new format is one counter function registered here under its SourceFormat.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass
from collections.abc import Callable

import fsspec

from marin_assets.data.sources import SourceFormat, SourceSpec

RecordCounter = Callable[[str, SourceSpec], int]
COUNTERS: dict[SourceFormat, RecordCounter] = {}
_CHUNK = 1 << 20


def counts_records(*formats: SourceFormat) -> Callable[[RecordCounter], RecordCounter]:
    def register(counter: RecordCounter) -> RecordCounter:
        for fmt in formats:
            COUNTERS[fmt] = counter
        return counter

    return register


def count_records(uri: str, spec: SourceSpec) -> int:
    counter = COUNTERS.get(spec.format)
    if counter is None:
        raise ValueError(f"source {spec.name!r}: no record counter for format {spec.format!r}")
    return counter(uri, spec)


class _Lines:
    """Counts newline-terminated lines (and a last unterminated one) over decompressed chunks."""

    def __init__(self) -> None:
        self.lines, self.bytes, self._open_line = 0, 0, False

    def feed(self, data: bytes) -> None:
        if data:
            self.lines += data.count(b"\n")
            self.bytes += len(data)
            self._open_line = not data.endswith(b"\n")

    def total(self, broken: bool = False) -> int:
        if broken:  # lines decoded before the break, plus one record for the unreadable rest
            return self.lines + 1
        if self.bytes == 0:
            return 1  # an empty file is one quarantined record
        return self.lines + int(self._open_line)


@counts_records(SourceFormat.JSONL)
def _plain_lines(uri: str, spec: SourceSpec) -> int:
    lines = _Lines()
    with fsspec.open(uri, "rb") as f:
        while chunk := f.read(_CHUNK):
            lines.feed(chunk)
    return lines.total()


@counts_records(SourceFormat.JSONL_GZ)
def _gzip_lines(uri: str, spec: SourceSpec) -> int:
    # gzip checks a member's CRC only at its end: the stdlib's GzipFile returns what it decoded
    # before that (read1: one decode step at a time), so a damaged member counts like it reads.
    lines = _Lines()
    with fsspec.open(uri, "rb") as raw, gzip.GzipFile(fileobj=raw) as f:
        try:
            while chunk := f.read1(_CHUNK):
                lines.feed(chunk)
        except (EOFError, zlib.error, gzip.BadGzipFile):
            return lines.total(broken=True)
    return lines.total()


@counts_records(SourceFormat.JSONL_ZST)
def _zstd_lines(uri: str, spec: SourceSpec) -> int:
    """Frame by frame; a file that ends inside a frame was cut short (a break)."""
    import zstandard

    lines = _Lines()
    decoder, in_frame = zstandard.ZstdDecompressor().decompressobj(), False
    with fsspec.open(uri, "rb") as f:
        try:
            while chunk := f.read(_CHUNK):
                while chunk:
                    in_frame = True
                    lines.feed(decoder.decompress(chunk))
                    chunk = b""
                    if decoder.eof:  # frame done: what is left of the chunk starts the next one
                        chunk, in_frame = decoder.unused_data, False
                        decoder = zstandard.ZstdDecompressor().decompressobj()
        except zstandard.ZstdError:
            return lines.total(broken=True)
    return lines.total(broken=in_frame)


@counts_records(SourceFormat.PARQUET)
def _parquet_rows(uri: str, spec: SourceSpec) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    with fsspec.open(uri, "rb") as f:
        try:
            meta = pq.ParquetFile(f)
        except (pa.ArrowException, OSError):
            return 1  # unopenable: one quarantined record
        if spec.text_field not in meta.schema_arrow.names:
            return 1  # the whole file is quarantined as missing its text column
        return meta.metadata.num_rows or 1


@counts_records(SourceFormat.WARC, SourceFormat.WARC_GZ)
def _warc_documents(uri: str, spec: SourceSpec) -> int:
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    documents = WarcRecordType.response | WarcRecordType.resource
    count = 0
    with fsspec.open(uri, "rb") as f:
        try:
            for _ in ArchiveIterator(f, record_types=documents, parse_http=False):
                count += 1
        except OSError:
            return count + 1
    return count or 1  # no document record: one quarantined record


@counts_records(SourceFormat.HTML_DIR)
def _one_per_file(uri: str, spec: SourceSpec) -> int:
    return 1


_ROW_LABELS = {"documents": "kept", "quarantine": "quarantined"}


@dataclass(frozen=True)
class Conservation:
    passed: bool
    message: str


def conservation(counted: int | None, cleaner_in: int, rows: dict[str, int]) -> Conservation:
    """counted (this module, per file) = cleaner's records_in = kept + rejected + quarantined rows?"""
    accounted = sum(rows.values())
    parts = " + ".join(f"{n} {_ROW_LABELS.get(name, name)}" for name, n in rows.items())
    if counted is None:
        return Conservation(False, "no independent record count (reader_counts.json missing): "
                                   "re-materialize cleaned_documents for this source")
    if counted == cleaner_in == accounted:
        return Conservation(True, f"{counted} records in the raw files = {parts}")
    lost = counted - accounted
    what = f"{lost} record(s) lost" if lost > 0 else f"{-lost} record(s) more than the raw files hold"
    return Conservation(False, f"{what}: the raw files hold {counted} records (counted per file by format), "
                               f"the cleaner read {cleaner_in}, the output holds {accounted} ({parts})")
