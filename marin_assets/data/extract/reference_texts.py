"""A source's raw records as plain text, extracted and normalised as the cleaning job does (no Spark).

For small reference uses on the driver: training the quality classifier, building the sample eval set.
"""

from __future__ import annotations

from collections.abc import Iterator

from marin_assets.data.extract.extractor_choice import html_to_text
from marin_assets.data.formats.records import HTTP_STATUS, rejected_http_status
from marin_assets.data.clean.normalize import normalize_text
from marin_assets.data.formats.readers import QuarantinedRecord, RawRecord, list_source_files, read_file
from marin_assets.data.sources.source_registry import SourceSpec


def source_texts(spec: SourceSpec, max_record_bytes: int = 5_000_000, form: str = "NFC",
                 skipped: dict | None = None) -> Iterator[tuple[str, str]]:  # fmt: skip
    """(record id, text) of each readable record; unreadable ones are counted in `skipped` by reason."""
    skipped = {} if skipped is None else skipped
    for path in list_source_files(spec):
        for record in read_file(path, spec, max_record_bytes):
            if isinstance(record, QuarantinedRecord):
                skipped["quarantined"] = skipped.get("quarantined", 0) + 1
                continue
            if not isinstance(record, RawRecord):  # an ignored place (a blank line): no record
                continue
            if rejected_http_status(record.metadata):  # the cleaning job rejects these as http_status
                skipped[HTTP_STATUS] = skipped.get(HTTP_STATUS, 0) + 1
                continue
            text = record.content
            if record.content_type == "html":
                try:
                    text = html_to_text(text)
                except Exception:  # the cleaning job quarantines these; a reference set just skips them
                    skipped["extraction_failed"] = skipped.get("extraction_failed", 0) + 1
                    continue
            if text := normalize_text(text, form):
                yield record.id, text
            else:
                skipped["empty_text"] = skipped.get("empty_text", 0) + 1
