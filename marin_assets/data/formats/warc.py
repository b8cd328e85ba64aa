"""WARC (plain or gzip): response and resource records become HTML/text documents.

fastwarc returns a record cut short by the end of the file without complaint, so the payload
length is compared with Content-Length here.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import fsspec
from fastwarc.warc import ArchiveIterator, WarcRecordType

from marin_assets.data.formats import records as r
from marin_assets.data.formats.html import decode_html
from marin_assets.data.formats.records import QuarantinedRecord, RawRecord
from marin_assets.data.formats.streams import CountingReader

_DOCUMENT_RECORDS = WarcRecordType.response | WarcRecordType.resource
_CONTENT_TYPES = {"text/html": "html", "application/xhtml+xml": "html", "text/plain": "text"}


def read_warc(path: str, *, source: str, max_record_bytes: int) -> Iterator[RawRecord | QuarantinedRecord]:
    """Yield one record per response/resource record (request, metadata, warcinfo are not documents)."""
    seen_any = False
    last_position = 0
    with fsspec.open(path, "rb") as raw:
        counter = CountingReader(raw, path)
        records = ArchiveIterator(counter, record_types=_DOCUMENT_RECORDS, parse_http=True)
        try:
            for record in records:
                seen_any = True
                last_position = record.stream_pos
                yield _to_document(record, path, source, max_record_bytes)
        except OSError as exc:  # fastwarc's error for bad headers and broken compression
            where = f"after the record at byte {last_position}" if seen_any else "in the first record"
            yield r.quarantine(path, last_position, r.CORRUPT_STREAM, f"{exc} ({where})")
            return
    if not seen_any:
        # Either no bytes at all, or a WARC without a single document record: both are worth a look.
        yield r.quarantine(path, 0, r.EMPTY_FILE, "" if counter.position == 0 else "no response/resource records")


def _to_document(record, path: str, source: str, max_record_bytes: int) -> RawRecord | QuarantinedRecord:
    offset = record.stream_pos
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
    return RawRecord(
        id=record_id or r.derived_id(source, path, offset),
        url=record.headers.get("WARC-Target-URI"),
        content=text,
        content_type=content_type,
        metadata={"warc_type": record.headers.get("WARC-Type"), "warc_date": record.headers.get("WARC-Date")},
        raw_length=len(payload),
        file=path,
        offset=offset,
    )


def warc_resource_record(url: str, payload: bytes, *, date: str, content_type: str = "text/html") -> bytes:
    """One uncompressed WARC/1.1 resource record with a deterministic id (for samples and tests)."""
    return _warc_record("resource", payload, date=date, content_type=content_type, target_uri=url)


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
