"""The readers of the raw formats: each format module registers its reader with @reads(SourceFormat.X).

A reader is (path, spec, max_record_bytes) -> RawRecord | QuarantinedRecord, streamed
(`marin_assets.data.readers.read_file` is the entry point and imports the format modules). A new format
is one module in formats/ with a @reads function, its import in readers.py, and its SourceFormat value
(data/sources.py); its independent record counter registers in data/record_counts.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

Reader = Callable[..., Iterator]
READERS: dict[str, Reader] = {}


def reads(*formats: str) -> Callable[[Reader], Reader]:
    """Function decorator: the reader of these SourceFormats."""

    def register(reader: Reader) -> Reader:
        for fmt in formats:
            if fmt in READERS:
                raise ValueError(f"format '{fmt}' has two readers: {READERS[fmt].__name__} and {reader.__name__}")
            READERS[fmt] = reader
        return reader

    return register


def reader_for(fmt: str, source: str) -> Reader:
    if fmt not in READERS:
        raise ValueError(f"source {source!r}: no reader for format {fmt!r}")
    return READERS[fmt]

