"""What a reader yields: a raw record, a quarantined one with a stable reason code, or an ignored one
(a place in the file that holds no record, e.g. a blank JSONL line: counted, never quarantined)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Literal

EXCERPT_CHARS = 200

# Reason codes (the text before ':' in QuarantinedRecord.reason); stable, so counts can be grouped.
EMPTY_FILE = "empty_file"
BLANK_LINE = "blank_line"  # ignored, not quarantined: a blank JSONL line is no record
MALFORMED_JSON = "malformed_json"
MISSING_FIELD = "missing_field"
BAD_FIELD = "bad_field"
INVALID_UTF8 = "invalid_utf8"
INVALID_ENCODING = "invalid_encoding"
CORRUPT_STREAM = "corrupt_stream"
UNREADABLE_FILE = "unreadable_file"
TRUNCATED_WARC_RECORD = "truncated_warc_record"
UNSUPPORTED_CONTENT_TYPE = "unsupported_content_type"
RECORD_TOO_LARGE = "record_too_large"

# A readable record that is not a document: rejected under this rule (not quarantined: nothing is broken).
HTTP_STATUS = "http_status"  # a WARC response whose HTTP status is not 200 (404 page, redirect, error)
HTTP_STATUS_KEY = "http_status"  # where the WARC reader records the status in RawRecord.metadata


def rejected_http_status(metadata: dict) -> int | None:
    """The HTTP status of a response that is not a document (not 200), or None (200, or not HTTP)."""
    status = metadata.get(HTTP_STATUS_KEY)
    return status if status is not None and status != 200 else None


@dataclass(frozen=True)
class RawRecord:
    id: str
    url: str | None
    content: str
    content_type: Literal["text", "html"]
    metadata: dict = field(hash=False)
    raw_length: int  # bytes of the raw record as stored (before extraction)
    file: str
    offset: int  # byte offset of the record in the (decompressed) file; row index for Parquet


@dataclass(frozen=True)
class QuarantinedRecord:
    file: str
    offset: int
    reason: str  # "<code>" or "<code>: <detail>"
    excerpt: str

    @property
    def code(self) -> str:
        return self.reason.split(":", 1)[0]


@dataclass(frozen=True)
class IgnoredRecord:
    file: str
    offset: int
    reason: str  # a code: BLANK_LINE


def quarantine(file: str, offset: int, code: str, detail: str = "", raw: bytes | str = b"") -> QuarantinedRecord:
    text = raw if isinstance(raw, str) else raw[: EXCERPT_CHARS * 4].decode("utf-8", errors="replace")
    return QuarantinedRecord(file, offset, f"{code}: {detail}" if detail else code, text[:EXCERPT_CHARS])


def derived_id(source: str, file: str, offset: int) -> str:
    """Deterministic id for records that carry none: source, file name and offset."""
    return f"{source}/{posixpath.basename(file)}#{offset}"
