"""The readers of the raw formats: each format module registers its reader with @reads(SourceFormat.X).

A reader is (path, spec, max_record_bytes) -> RawRecord | QuarantinedRecord, streamed
(`marin_assets.data.formats.readers.read_file` is the entry point and imports the format modules). A new format
is one module in formats/ with a @reads function, its import in readers.py, and its SourceFormat value
(data/sources.py); its independent record counter registers in data/record_counts.py.
"""

from __future__ import annotations

from marin_assets.core.registries import Registry

READERS = Registry("format")
reads = READERS.register


def reader_for(fmt: str, source: str):
    return READERS.lookup(fmt, f"source '{source}': no reader: ")
