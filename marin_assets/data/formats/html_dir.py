"""A folder of HTML files: each file is one document."""

from __future__ import annotations

from collections.abc import Iterator

import fsspec

from marin_assets.data.formats import records as r
from marin_assets.data.formats.html import decode_html
from marin_assets.data.formats.records import QuarantinedRecord, RawRecord
from marin_assets.data.formats.format_base import FileFormat, register_format
from marin_assets.data.sources.source_files import HTML_SUFFIXES, relative_name
from marin_assets.data.sources.source_registry import SourceSpec

def read_html_file(
    path: str, *, source: str, relative_name: str, max_record_bytes: int
) -> Iterator[RawRecord | QuarantinedRecord]:
    fs, fs_path = fsspec.core.url_to_fs(path)
    size = fs.size(fs_path)
    if size == 0:
        yield r.quarantine(path, 0, r.EMPTY_FILE)
        return
    if size > max_record_bytes:
        yield r.quarantine(path, 0, r.RECORD_TOO_LARGE, f"{size} bytes")
        return
    with fs.open(fs_path, "rb") as f:
        data = f.read()
    text, encoding = decode_html(data)
    if text is None:
        yield r.quarantine(path, 0, r.INVALID_ENCODING, encoding, data)
        return
    yield RawRecord(
        id=f"{source}/{relative_name}",
        url=None,
        content=text,
        content_type="html",
        metadata={"path": relative_name, "encoding": encoding},
        raw_length=len(data),
        file=path,
        offset=0,
    )


@register_format
class HtmlDir(FileFormat):
    """A folder of HTML files, one document each."""

    suffixes = {"html_dir": HTML_SUFFIXES}

    def read(self, path: str, spec: SourceSpec, max_record_bytes: int) -> Iterator[RawRecord | QuarantinedRecord]:
        return read_html_file(path, source=spec.name, relative_name=relative_name(path, spec),
                              max_record_bytes=max_record_bytes)  # fmt: skip

    def count(self, uri: str, spec: SourceSpec) -> int:
        return 1
