"""How many records each raw file holds, counted by format without the readers or the cleaner.

counts_conserve compares this count with the rows the cleaning job wrote (kept + rejected +
quarantined), so a reader or a cleaner that drops records fails the check. The counters follow
the readers' documented conventions, not their code: one record per JSONL line (blank and
over-long lines included), per Parquet row (file metadata), per WARC response/resource record,
per HTML file; an empty or unopenable file is one (quarantined) record, and each damaged
gzip member / zstd frame is one record (reading resumes at the next one).

Each format's counter is its class's `count` (format_base.FileFormat); the line counting the JSONL
formats share is here.
"""

from __future__ import annotations

from dataclasses import dataclass

import fsspec

from marin_assets.data.formats.format_base import format_for

_CHUNK = 1 << 20


def count_records(uri: str, spec) -> int:
    """The file's records as its format counts them (the registered format's `count`)."""
    return format_for(spec.format, spec.name).count(uri, spec)


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


def count_lines(uri: str) -> int:
    """Newline-terminated lines, and a last unterminated one (an empty file: one record)."""
    lines = _Lines()
    with fsspec.open(uri, "rb") as f:
        while chunk := f.read(_CHUNK):
            lines.feed(chunk)
    return lines.total()


def count_lines_by_member(uri: str, compression: str) -> int:
    """Lines of the decompressed stream, member by member (gzip) or frame by frame (zstd).

    The readers resume after a damaged member/frame and report the damage as one record, the
    partial line before it included; decompression (not parsing) is shared with them, so the
    count still checks that every line and every damage became a record.
    """
    from marin_assets.data.formats.streams import CountingReader, Damage, MemberDecoder

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
