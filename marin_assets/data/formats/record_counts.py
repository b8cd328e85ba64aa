"""How many records each raw file holds, counted by format without the readers or the cleaner.

counts_conserve compares this count with the rows the cleaning job wrote (kept + rejected +
quarantined), so a reader or a cleaner that drops records fails the check. The counters follow
the readers' documented conventions, not their code: one record per JSONL line (blank and
over-long lines included), per Parquet row (file metadata), per WARC response/resource record,
per HTML file; an empty or unopenable file is one (quarantined) record, and each damaged
gzip member / zstd frame is one record (reading resumes at the next one).

A new format is one counter function registered here under its SourceFormat.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

import fsspec

from marin_assets.data.sources.source_registry import SourceFormat, SourceSpec

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


@counts_records(SourceFormat.JSONL_GZ, SourceFormat.JSONL_ZST)
def _compressed_lines(uri: str, spec: SourceSpec) -> int:
    """Lines of the decompressed stream, member by member (gzip) or frame by frame (zstd).

    The readers resume after a damaged member/frame and report the damage as one record, the
    partial line before it included; decompression (not parsing) is shared with them, so the
    count still checks that every line and every damage became a record.
    """
    from marin_assets.data.formats.streams import CountingReader, Damage, MemberDecoder

    compression = "gzip" if spec.format == SourceFormat.JSONL_GZ else "zstd"
    lines, damages = _Lines(), 0
    with fsspec.open(uri, "rb") as raw:
        for chunk in MemberDecoder(CountingReader(raw, uri), compression).chunks():
            if isinstance(chunk, Damage):
                damages += 1
                lines._open_line = False  # the partial line before the damage is part of its record
            else:
                lines.feed(chunk)
    if damages:
        return lines.lines + damages + int(lines._open_line)
    return lines.total()


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
    """Response/resource records; a damaged stretch is one record, and counting resumes where the
    WARC convention says reading does: the next gzip member after the damaged one (warc.gz), or
    the next "WARC/1." after the last good record (plain)."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    from marin_assets.data.formats.streams import GZIP_MAGIC, find_magic
    from marin_assets.data.formats.warc import WARC_MAGIC

    documents = WarcRecordType.response | WarcRecordType.resource
    count, base, damaged = 0, 0, False
    with fsspec.open(uri, "rb") as f:
        magic = GZIP_MAGIC if f.read(len(GZIP_MAGIC)) == GZIP_MAGIC else WARC_MAGIC
        while True:
            f.seek(base)
            last = None
            try:
                for record in ArchiveIterator(f, record_types=documents, parse_http=False):
                    count, last = count + 1, base + record.stream_pos
                break
            except OSError:
                count, damaged = count + 1, True
                good = last if last is not None else base - 1
                bad_start = find_magic(f, good + 1, magic) if magic == GZIP_MAGIC else None
                resume = find_magic(f, max(good, bad_start or 0) + 1, magic)
                if resume is None:
                    break
                base = resume
    return count if (count or damaged) else 1  # no document record at all: one quarantined record


@counts_records(SourceFormat.HTML_DIR)
def _one_per_file(uri: str, spec: SourceSpec) -> int:
    return 1


_ROW_LABELS = {"documents": "kept", "quarantine": "quarantined"}


@dataclass(frozen=True)
class Conservation:
    passed: bool
    message: str


def conservation(counted: int | None, cleaner_in: int, rows: dict[str, int]) -> Conservation:
    """counted (this module, per file) = cleaner's records_in = kept + rejected + quarantined rows (+ the
    ignored places, e.g. blank lines, which the stats count and no table holds)?"""
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
