"""The per-record extraction time limit: a deeply nested page is stopped and quarantined, the rest goes on."""

from __future__ import annotations

import time

import pytest

from marin_assets.data.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.cleaning_rows import EXTRACTION_TIMEOUT, QUARANTINED, RecordCleaner
from marin_assets.data.extraction_worker import ExtractionTimeout, ExtractionWorker

pytestmark = pytest.mark.slow  # child processes start (~1-3 s each) and a page runs into its deadline

PROSE = " ".join(f"Line {i} of a calm page explains the river, the bridge and the old town." for i in range(10))


def deep_page(depth: int = 12000) -> str:
    """Nested <div>s: extraction time grows about quadratically with depth: ~16 s at 12,000 here, far
    past the tests' 0.5-1 s limits whatever the machine's speed (at 4,000 it was 1.5 s: too close)."""
    return "<html><body>" + "<div><p>deep text here</p>" * depth + "</div>" * depth + "</body></html>"


def calm_page() -> str:
    return f"<html><body><article><p>{PROSE}</p></article></body></html>"


def _recipe(timeout: float):
    recipe = load_cleaning_recipe()
    return recipe.model_copy(update={"extraction": recipe.extraction.model_copy(update={"timeout_seconds": timeout})})


def _record(i: int, html: str) -> dict:
    return {"kind": "record", "id": f"p{i}", "url": f"https://example.org/{i}", "content": html,
            "content_type": "html", "metadata": "{}", "raw_length": len(html), "file": "pages.warc", "offset": i,
            "reason": None, "excerpt": None}  # fmt: skip


def test_worker_stops_a_slow_page_and_serves_the_next():
    settings = load_cleaning_recipe().extraction
    worker = ExtractionWorker(settings, "article", timeout_seconds=0.5)
    try:
        assert PROSE in worker.extract(calm_page())  # starts the child (startup is not timed)
        start = time.monotonic()
        with pytest.raises(ExtractionTimeout, match="exceeded 0.5 s"):
            worker.extract(deep_page())
        assert time.monotonic() - start < 5  # killed at the deadline, not after the page finished
        assert PROSE in worker.extract(calm_page())  # a fresh child took over
    finally:
        worker.close()


def test_slow_page_is_quarantined_as_extraction_timeout_and_the_batch_goes_on():
    import pyarrow as pa

    cleaner = RecordCleaner(_recipe(0.5), "debian_handbook")  # its extractor needs no trafilatura: quick start
    batch = pa.RecordBatch.from_pylist([_record(0, calm_page()), _record(1, deep_page()), _record(2, calm_page())])
    rows = pa.Table.from_batches(list(cleaner.clean_batches([batch]))).to_pylist()
    assert [r["status"] for r in rows][1] == QUARANTINED
    assert rows[1]["reason"] == f"{EXTRACTION_TIMEOUT}: exceeded 0.5 s" and rows[1]["excerpt"].startswith("<html>")
    assert rows[0]["status"] != QUARANTINED and rows[2]["status"] != QUARANTINED
    assert PROSE in rows[2]["text"]
    assert cleaner._extract is None  # the child process ended with the partition
