"""JSON Lines (plain, gzip, zstd): one JSON object per line, streamed with a per-line size cap.

A UTF-8 byte order mark before the first line is skipped (editors on Windows write one). Lone
surrogates spelled as JSON escapes are repaired to U+FFFD and counted (formats/repairs.py).
A damaged gzip member or zstd frame becomes one `corrupt_stream` record (where it began, the
compressed bytes lost; records lost are unknown), and reading resumes at the next member/frame.
gzip checks its CRC only at the end of a member, so lines decoded from a damaged block before that
may show up first (as malformed lines, or as records if the garbage happens to parse). After a
resync, offsets count the decoded bytes read, since the lost part's length is unknown.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

from marin_assets.data.formats import records as r
from marin_assets.data.formats.records import QuarantinedRecord, RawRecord
from marin_assets.data.formats.format_base import FileFormat, register_format
from marin_assets.data.formats.record_counts import count_lines, count_lines_by_member
from marin_assets.data.sources.source_registry import SourceSpec
from marin_assets.data.formats.repairs import LONE_SURROGATE, REPAIRS_KEY, may_need_repair, repair_value
from marin_assets.data.clean.file_errors import loss_detail
from marin_assets.data.formats.streams import CorruptBlock, DecodedStream, open_decoded

_SKIP_CHUNK = 1 << 20
_BOM = b"\xef\xbb\xbf"


def read_jsonl(
    path: str,
    *,
    source: str,
    compression: str | None,
    text_field: str,
    id_field: str | None,
    url_field: str | None,
    max_record_bytes: int,
) -> Iterator[RawRecord | QuarantinedRecord]:
    offset = 0
    damaged = False
    with open_decoded(path, compression) as stream:
        for line, length in _lines(stream, max_record_bytes):
            if isinstance(line, CorruptBlock):
                damage, damaged = line.damage, True
                detail = (f"{damage.reason} (decompressed byte {offset}, compressed byte ~{damage.compressed_offset}); "
                          f"{loss_detail(damage.lost_bytes, None)}")  # fmt: skip
                yield r.quarantine(path, offset, r.CORRUPT_STREAM, detail)
            else:
                yield _parse_line(line, length, path, offset, source, text_field, id_field, url_field)
            offset += length
    if offset == 0 and not damaged:
        yield r.quarantine(path, 0, r.EMPTY_FILE)


def _lines(stream: DecodedStream, max_record_bytes: int) -> Iterator[tuple[bytes | CorruptBlock | None, int]]:
    """(line, its length in bytes incl. newline); line is None when it exceeds the cap, a CorruptBlock
    (length: the partial line lost with it) where a member/frame was lost.

    An over-long line is skipped in bounded chunks, so memory stays near `max_record_bytes`.
    """
    while True:
        try:
            line = stream.readline(max_record_bytes + 1)
            if not line:
                return
            if len(line) <= max_record_bytes or line.endswith(b"\n"):
                yield line, len(line)
                continue
            length = len(line)
            while not line.endswith(b"\n") and (line := stream.readline(_SKIP_CHUNK)):
                length += len(line)
            yield None, length
        except CorruptBlock as block:
            yield block, block.partial_line_bytes


def _parse_line(
    line: bytes | None,
    length: int,
    path: str,
    offset: int,
    source: str,
    text_field: str,
    id_field: str | None,
    url_field: str | None,
) -> RawRecord | QuarantinedRecord | r.IgnoredRecord:
    if line is None:
        return r.quarantine(path, offset, r.RECORD_TOO_LARGE, f"{length} bytes")
    body = line.rstrip(b"\r\n")
    if offset == 0 and body.startswith(_BOM):
        body = body[len(_BOM) :]
    if not body.strip():
        return r.IgnoredRecord(path, offset, r.BLANK_LINE)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return r.quarantine(path, offset, r.INVALID_UTF8, f"{exc.reason} at byte {exc.start}", body)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return r.quarantine(path, offset, r.MALFORMED_JSON, f"{exc.msg} (char {exc.pos})", text)
    if not isinstance(obj, dict):
        return r.quarantine(path, offset, r.MALFORMED_JSON, f"a JSON {type(obj).__name__}, not an object", text)
    repairs: Counter = Counter()
    if may_need_repair(text):
        obj = repair_value(obj, repairs)
    if text_field not in obj:
        return r.quarantine(path, offset, r.MISSING_FIELD, text_field, text)
    content = obj.pop(text_field)
    if not isinstance(content, str):
        return r.quarantine(path, offset, r.BAD_FIELD, f"{text_field} is {type(content).__name__}", text)
    record_id = obj.pop(id_field, None) if id_field else None
    url = obj.pop(url_field, None) if url_field else None
    if repairs:
        obj[REPAIRS_KEY] = dict(repairs)
    return RawRecord(
        id=str(record_id) if record_id is not None else r.derived_id(source, path, offset),
        url=str(url) if url is not None else None,
        content=content,
        content_type="text",
        metadata=obj,
        raw_length=len(body),
        file=path,
        offset=offset,
    )


_COMPRESSION = {"jsonl": None, "jsonl.gz": "gzip", "jsonl.zst": "zstd"}


@register_format
class Jsonl(FileFormat):
    """One record per line (blank and over-long lines included); a folder takes only the declared compression."""

    suffixes = {"jsonl": (".jsonl",), "jsonl.gz": (".jsonl.gz",), "jsonl.zst": (".jsonl.zst",)}
    repairs = (LONE_SURROGATE,)

    def read(self, path: str, spec: SourceSpec, max_record_bytes: int) -> Iterator[RawRecord | QuarantinedRecord]:
        return read_jsonl(path, source=spec.name, compression=_COMPRESSION[spec.format], text_field=spec.text_field,
                          id_field=spec.id_field, url_field=spec.url_field, max_record_bytes=max_record_bytes)  # fmt: skip

    def count(self, uri: str, spec: SourceSpec) -> int:
        compression = _COMPRESSION[spec.format]
        return count_lines(uri) if compression is None else count_lines_by_member(uri, compression)
