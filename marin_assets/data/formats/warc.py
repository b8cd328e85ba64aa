"""WARC (plain or gzip): response and resource records become HTML/text documents.

fastwarc returns a record cut short by the end of the file without complaint, so the payload
length is compared with Content-Length here. After a corrupt record or gzip member, reading resumes
at the next record start ("WARC/1." / the next gzip member) with one `corrupt_stream` record for
the gap: its bytes are known for warc.gz (member to member), unknown for plain WARC.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import fsspec
from fastwarc.warc import ArchiveIterator, WarcRecordType

from marin_assets.data.clean.file_errors import loss_detail
from marin_assets.data.formats import records as r
from marin_assets.data.formats.html import decode_html
from marin_assets.data.formats.records import QuarantinedRecord, RawRecord
from marin_assets.data.formats.format_base import FileFormat, register_format
from marin_assets.data.sources.source_registry import SourceSpec
from marin_assets.data.formats.streams import GZIP_MAGIC, CountingReader, find_magic

_DOCUMENT_RECORDS = WarcRecordType.response | WarcRecordType.resource
_CONTENT_TYPES = {"text/html": "html", "application/xhtml+xml": "html", "text/plain": "text"}


WARC_MAGIC = b"WARC/1."  # a record starts here (resync point after damage in a plain WARC)


def read_warc(path: str, *, source: str, max_record_bytes: int) -> Iterator[RawRecord | QuarantinedRecord]:
    """Yield one record per response/resource record (request, metadata, warcinfo are not documents)."""
    seen_any = False
    base = 0  # where the current ArchiveIterator started (0, or the resume point after damage)
    with fsspec.open(path, "rb") as raw:
        magic = GZIP_MAGIC if raw.read(len(GZIP_MAGIC)) == GZIP_MAGIC else WARC_MAGIC
        while True:
            raw.seek(base)
            counter = CountingReader(raw, path)
            last_position = None
            try:
                for record in ArchiveIterator(counter, record_types=_DOCUMENT_RECORDS, parse_http=True):
                    seen_any = True
                    last_position = base + record.stream_pos
                    yield _to_document(record, path, source, max_record_bytes, base)
                break
            except OSError as exc:  # fastwarc's error for bad headers and broken compression
                good = last_position if last_position is not None else base - 1
                bad_start = find_magic(raw, good + 1, magic) if magic == GZIP_MAGIC else None
                resume = find_magic(raw, max(good, bad_start or 0) + 1, magic)
                where = f"after the record at byte {last_position}" if last_position is not None else f"at byte {base}"
                lost = (resume if resume is not None else _size(raw)) - bad_start if bad_start is not None else None
                detail = f"{exc} ({where}); " + (f"resumed at byte {resume}" if resume is not None else "nothing after it")
                offset = bad_start if bad_start is not None else max(good, 0)
                yield r.quarantine(path, offset, r.CORRUPT_STREAM,
                                   f"{detail}; {loss_detail(lost, None) if lost is not None else 'lost unknown bytes'}")
                if resume is None:
                    return
                base = resume
    if not seen_any and base == 0:
        # Either no bytes at all, or a WARC without a single document record: both are worth a look.
        yield r.quarantine(path, 0, r.EMPTY_FILE, "" if counter.position == 0 else "no response/resource records")


def _size(raw) -> int:
    return raw.seek(0, 2)


def _to_document(record, path: str, source: str, max_record_bytes: int, base: int) -> RawRecord | QuarantinedRecord:
    offset = base + record.stream_pos
    expected = record.content_length  # payload bytes left after the HTTP headers, from Content-Length
    if expected > max_record_bytes:
        record.reader.consume()
        return r.quarantine(path, offset, r.RECORD_TOO_LARGE, f"{expected} bytes")
    payload = record.reader.read()
    if len(payload) < expected:
        return r.quarantine(path, offset, r.TRUNCATED_WARC_RECORD, f"{len(payload)} of {expected} bytes", payload)
    if record.is_http:
        media_type, charset = record.http_content_type, record.http_charset
    else:
        media_type, _, params = (record.headers.get("Content-Type") or "").partition(";")
        charset = params.partition("charset=")[2].strip() or None
    media_type = (media_type or "").strip().lower()
    content_type = _CONTENT_TYPES.get(media_type)
    if content_type is None:
        return r.quarantine(path, offset, r.UNSUPPORTED_CONTENT_TYPE, media_type or "none", payload)
    text, encoding = decode_html(payload, charset)
    if text is None:
        return r.quarantine(path, offset, r.INVALID_ENCODING, encoding, payload)
    record_id = (record.headers.get("WARC-Record-ID") or "").strip("<>")
    metadata = {"warc_type": record.headers.get("WARC-Type"), "warc_date": record.headers.get("WARC-Date")}
    if record.is_http:  # the cleaner rejects a non-200 response as http_status (a 404 page is no document)
        metadata[r.HTTP_STATUS_KEY] = record.http_headers.status_code
    return RawRecord(
        id=record_id or r.derived_id(source, path, offset),
        url=record.headers.get("WARC-Target-URI"),
        content=text,
        content_type=content_type,
        metadata=metadata,
        raw_length=len(payload),
        file=path,
        offset=offset,
    )


def warc_resource_record(url: str, payload: bytes, *, date: str, content_type: str = "text/html") -> bytes:
    """One uncompressed WARC/1.1 resource record with a deterministic id (for samples and tests)."""
    return _warc_record("resource", payload, date=date, content_type=content_type, target_uri=url)


def warc_response_record(url: str, html: bytes, *, date: str, status: int = 200, reason: str = "OK") -> bytes:
    """One uncompressed WARC/1.1 response record (HTTP headers + HTML) with a deterministic id (for tests)."""
    http = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(html)}\r\n\r\n").encode() + html
    return _warc_record("response", http, date=date, content_type="application/http; msgtype=response", target_uri=url)


def warc_warcinfo_record(filename: str, fields: bytes, *, date: str) -> bytes:
    return _warc_record("warcinfo", fields, date=date, content_type="application/warc-fields", filename=filename)


def _warc_record(warc_type: str, payload: bytes, *, date: str, content_type: str, **named: str) -> bytes:
    extra = {"target_uri": "WARC-Target-URI", "filename": "WARC-Filename"}
    key = next(iter(named.values()))
    lines = [
        "WARC/1.1",
        f"WARC-Type: {warc_type}",
        f"WARC-Record-ID: <urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, warc_type + ':' + key)}>",
        f"WARC-Date: {date}",
        *(f"{extra[name]}: {value}" for name, value in named.items()),
        f"Content-Type: {content_type}",
        f"Content-Length: {len(payload)}",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload + b"\r\n\r\n"


@register_format
class Warc(FileFormat):
    """Response/resource records; the reader detects gzip itself, so a warc or warc.gz folder takes both."""

    suffixes = {"warc": (".warc", ".warc.gz"), "warc.gz": (".warc", ".warc.gz")}

    def read(self, path: str, spec: SourceSpec, max_record_bytes: int) -> Iterator[RawRecord | QuarantinedRecord]:
        return read_warc(path, source=spec.name, max_record_bytes=max_record_bytes)

    def count(self, uri: str, spec: SourceSpec) -> int:
        """Response/resource records; a damaged stretch is one record, and counting resumes where the
        WARC convention says reading does: the next gzip member after the damaged one (warc.gz), or
        the next "WARC/1." after the last good record (plain)."""
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
