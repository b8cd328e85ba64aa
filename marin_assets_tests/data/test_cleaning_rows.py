"""The per-record cleaning the Spark job runs, without Spark."""

import pandas as pd
import pyarrow as pa

from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.clean.cleaning_rows import (
    KEPT, RECORD_COLUMNS, ROW_COLUMNS, RecordCleaner, record_tuple, row_arrow_schema,
)
from marin_assets.data.dedup.dedup_keys import band_keys
from marin_assets.data.formats.readers import list_source_files, read_file
from marin_assets.data.sources.source_registry import load_sources


def _records(source: str) -> list[dict]:
    spec = load_sources().get(source)
    return [dict(zip(RECORD_COLUMNS, record_tuple(rec, f.rsplit("/", 1)[-1]), strict=True))
            for f in list_source_files(spec) for rec in read_file(f, spec)]


def test_batched_bands_equal_one_record_at_a_time():
    cleaner = RecordCleaner(load_cleaning_recipe())
    records = _records("dirty_web") + _records("debian_licenses")
    one_by_one = [cleaner.clean(rec) for rec in records]
    dedup = cleaner.recipe.dedup
    for row in one_by_one:  # the reference: each kept text hashed on its own
        if row["status"] == KEPT and (signature := cleaner.hasher.signature(row["text"])) is not None:
            row["bands"] = band_keys(signature, dedup.bands, dedup.rows)
    batches = [pa.RecordBatch.from_pylist(part) for part in (records[:20], records[20:])]
    batched = pa.Table.from_batches(list(cleaner.clean_batches(batches))).to_pandas()
    expected = pa.Table.from_pylist(one_by_one, schema=row_arrow_schema()).to_pandas()
    others = [c for c in ROW_COLUMNS if c != "bands"]
    pd.testing.assert_frame_equal(batched[others], expected[others])
    kept = expected["status"] == KEPT
    assert kept.sum() > 20 and expected.loc[kept, "bands"].notna().all()
    for b, o in zip(batched["bands"], expected["bands"], strict=True):
        assert (list(b) if b is not None else None) == (list(o) if o is not None else None)


def test_a_large_arrow_batch_is_cleaned_in_slices_with_the_same_rows(monkeypatch):
    """Spark hands over batches of thousands of records; they are turned into Python objects a slice at a
    time (bounded worker memory), with the same rows as the whole batch at once."""
    import marin_assets.data.clean.cleaning_rows as cleaning_rows

    records = _records("dirty_web") + _records("debian_licenses")
    batch = pa.RecordBatch.from_pylist(records)
    whole = pa.Table.from_batches(list(RecordCleaner(load_cleaning_recipe()).clean_batches([batch])))
    monkeypatch.setattr(cleaning_rows, "PYTHON_ROWS", 7)
    sliced = list(RecordCleaner(load_cleaning_recipe()).clean_batches([batch]))
    assert [b.num_rows for b in sliced] == [7] * (len(records) // 7) + ([len(records) % 7] if len(records) % 7 else [])
    assert pa.Table.from_batches(sliced).equals(whole)


def test_a_warc_response_that_is_not_200_is_rejected_as_http_status(tmp_path):
    """A 404 page with plenty of words is no document: rejected under http_status (value: the status), and
    counted with the other rejections; the same page served with 200 is not."""
    from marin_assets.data.formats.warc import warc_response_record
    from marin_assets.data.sources.source_registry import SourceSpec

    words = " ".join(f"Sorry, the page you asked for, number {i}, could not be found on this server." for i in range(40))
    html = f"<html><body><main><h1>Not found</h1><p>{words}</p></main></body></html>".encode()
    date = "2024-01-01T00:00:00Z"
    (tmp_path / "a.warc").write_bytes(warc_response_record("https://e.org/missing", html, date=date, status=404,
                                                           reason="Not Found")
                                      + warc_response_record("https://e.org/found", html, date=date))
    spec = SourceSpec(name="dirty_web", uri=str(tmp_path / "a.warc"), format="warc", license="CC0-1.0")
    read = list(read_file(str(tmp_path / "a.warc"), spec))
    assert [rec.metadata["http_status"] for rec in read] == [404, 200]
    cleaner = RecordCleaner(load_cleaning_recipe())
    rows = [cleaner.clean(dict(zip(RECORD_COLUMNS, record_tuple(rec, "a.warc"), strict=True))) for rec in read]
    assert (rows[0]["status"], rows[0]["reason"], rows[0]["value"]) == ("rejected", "http_status", "404")
    assert rows[1]["reason"] != "http_status"
