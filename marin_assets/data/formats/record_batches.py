"""Raw files -> Arrow batches of records (cleaning_rows.RECORD_COLUMNS): the cleaning job's read step.

Runs as a mapInArrow body over a DataFrame of file paths (one per task), so records reach the JVM
as Arrow columns, not as pickled Python rows turned into Spark rows one by one. The records are the
readers' (data.readers), so ids, offsets, metadata and quarantine rows are the same as reading the
file in process. Batches are cut by rows and by text size, so memory stays bounded on big records.

The same task also counts each file's records with record_counts (by format, not through the
readers) into a Spark accumulator of {file: records}: the conservation check keeps its independent
count without a second Spark job that reads every file again in fresh Python tasks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from marin_assets.data.clean.cleaning_rows import RECORD_COLUMNS, record_tuple
from marin_assets.data.formats.readers import read_file, relative_name
from marin_assets.data.formats.record_counts import count_records
from marin_assets.data.sources.source_registry import SourceSpec

BATCH_ROWS = 2048
BATCH_CHARS = 32 << 20  # well below Arrow's 2 GiB per string column


def record_arrow_schema():
    """RECORD_COLUMNS as Arrow types (the cleaning job's RECORD_SCHEMA)."""
    import pyarrow as pa

    ints = {"raw_length", "offset"}
    return pa.schema([(name, pa.int64() if name in ints else pa.string()) for name in RECORD_COLUMNS])


class FileCounts:
    """AccumulatorParam of {file: records}. Merging is a dict update, so a task that Spark runs again
    (a retry, a recomputed stage) adds the same counts again, not double counts."""

    def zero(self, value: dict) -> dict:
        return {}

    def addInPlace(self, counts: dict, more: dict) -> dict:
        counts.update(more)
        return counts


def record_batches(spec: SourceSpec, max_record_bytes: int, counted=None):
    """mapInArrow body: batches of file paths (column "path") -> batches of their records.

    counted: an accumulator (FileCounts) given {relative file name: count_records(file)} per file read.
    """
    import pyarrow as pa

    schema = record_arrow_schema()
    content = RECORD_COLUMNS.index("content")

    def to_batch(rows: list[tuple]):
        return pa.RecordBatch.from_arrays([pa.array(values, field.type) for values, field in zip(zip(*rows), schema)],
                                          schema=schema)  # fmt: skip

    def run(batches: Iterable) -> Iterator:
        for batch in batches:
            for path in batch.column("path").to_pylist():
                rows, chars, name = [], 0, relative_name(path, spec)  # file names relative to the source root
                if counted is not None:
                    counted.add({name: count_records(path, spec)})
                for record in read_file(path, spec, max_record_bytes):  # read_file: a global of `run` (tests patch it)
                    row = record_tuple(record, name)
                    rows.append(row)
                    chars += len(row[content] or "")
                    if len(rows) >= BATCH_ROWS or chars >= BATCH_CHARS:
                        yield to_batch(rows)
                        rows, chars = [], 0
                if rows:
                    yield to_batch(rows)

    return run
