"""The per-record extraction time limit: a deeply nested page is stopped and quarantined, the rest goes on."""

from __future__ import annotations

import time

import pytest

from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.clean.cleaning_rows import EXTRACTION_TIMEOUT, QUARANTINED, RecordCleaner
from marin_assets.data.extract.extraction_worker import ExtractionTimeout, ExtractionWorker

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
        with pytest.raises(ExtractionTimeout, match="exceeded 0.5 s of CPU time"):
            worker.extract(deep_page())
        assert time.monotonic() - start < 5  # killed at the deadline, not after the page finished
        assert PROSE in worker.extract(calm_page())  # a fresh child took over
    finally:
        worker.close()


def test_slow_page_is_quarantined_as_extraction_timeout_and_the_batch_goes_on():
    import pyarrow as pa

    cleaner = RecordCleaner(_recipe(0.5), "debian_handbook")  # trafilatura is built only if a page needs it
    batch = pa.RecordBatch.from_pylist([_record(0, calm_page()), _record(1, deep_page()), _record(2, calm_page())])
    rows = pa.Table.from_batches(list(cleaner.clean_batches([batch]))).to_pylist()
    assert [r["status"] for r in rows][1] == QUARANTINED
    assert rows[1]["reason"] == f"{EXTRACTION_TIMEOUT}: exceeded 0.5 s of CPU time" and rows[1]["excerpt"].startswith("<html>")
    assert rows[0]["status"] != QUARANTINED and rows[2]["status"] != QUARANTINED
    assert PROSE in rows[2]["text"]
    assert cleaner._extract is None  # the child process ended with the partition


# A child that answers after `wait` (sleeping: no CPU, or spinning: all CPU), once it has said it is ready.
CHILD = """
import sys, time
from marin_assets.data.extract.extraction_worker import _write
_write(sys.stdout.buffer, ("ready", None))
mode, wait = sys.argv[1], float(sys.argv[2])
end = time.monotonic() + wait
if mode == "sleep":
    time.sleep(wait)
else:
    while time.monotonic() < end:
        pass
_write(sys.stdout.buffer, ("ok", mode))
"""


def _child(mode: str, wait: float):
    import subprocess
    import sys

    import psutil

    from marin_assets.data.extract.extraction_worker import _past, _read, cpu_seconds

    proc = subprocess.Popen([sys.executable, "-c", CHILD, mode, str(wait)], stdout=subprocess.PIPE)
    assert _read(proc.stdout, _past(time.monotonic() + 60)) == ("ready", None)
    ps = psutil.Process(proc.pid)
    return proc, ps, cpu_seconds(ps)


def test_the_limit_counts_the_childs_cpu_time_not_the_wall_time_it_waits():
    from marin_assets.data.extract.extraction_worker import await_reply

    proc, ps, before = _child("sleep", 1.5)  # 1.5 s of wall time, ~0 s of CPU: a page waiting for a core
    try:
        assert await_reply(proc, ps, before, limit_s=0.5) == ("ok", "sleep")
    finally:
        proc.kill()
        proc.wait()


def test_a_child_spending_cpu_past_the_limit_is_stopped_near_it():
    from marin_assets.data.extract.extraction_worker import await_reply

    proc, ps, before = _child("spin", 30)
    start = time.monotonic()
    try:
        with pytest.raises(TimeoutError):
            await_reply(proc, ps, before, limit_s=0.5)
        assert time.monotonic() - start < 5  # stopped at about 0.5 s of CPU, not after the 30 s spin
    finally:
        proc.kill()
        proc.wait()


def test_a_child_spending_no_cpu_is_stopped_by_the_wall_backstop(monkeypatch):
    from marin_assets.data.extract import extraction_worker
    monkeypatch.setattr(extraction_worker, "WALL_BACKSTOP", 2)
    proc, ps, before = _child("sleep", 30)
    start = time.monotonic()
    try:
        with pytest.raises(TimeoutError):
            extraction_worker.await_reply(proc, ps, before, limit_s=0.5)
        assert 0.9 < time.monotonic() - start < 5  # 2 x 0.5 s of wall time
    finally:
        proc.kill()
        proc.wait()
