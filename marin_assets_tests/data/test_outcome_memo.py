"""Byte-identical copies of a record's content are cleaned once per worker, with the same rows as alone."""

from __future__ import annotations

import json

from marin_assets.data.clean import outcome_memo
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.clean.cleaning_rows import EXTRACTION_FAILED, QUARANTINED, RECORD_COLUMNS, RecordCleaner, record_tuple
from marin_assets.data.clean.outcome_memo import CONTENT_FIELDS, Outcome, OutcomeMemo, content_key, memo_for
from marin_assets.data.formats.readers import list_source_files, read_file
from marin_assets.data.sources.source_registry import load_sources


def _records(source: str) -> list[dict]:
    spec = load_sources().get(source)
    return [dict(zip(RECORD_COLUMNS, record_tuple(rec, f.rsplit("/", 1)[-1]), strict=True))
            for f in list_source_files(spec) for rec in read_file(f, spec)]  # fmt: skip


def _copy(rec: dict, n: int) -> dict:
    """The same content under another id, url, place and metadata (a mirror of the page)."""
    metadata = {**json.loads(rec["metadata"] or "{}"), "mirror": n}
    return {**rec, "id": f"{rec['id']}-copy{n}", "url": f"https://mirror{n}.example/{rec['id']}",
            "offset": 10_000 + n, "metadata": json.dumps(metadata, sort_keys=True)}  # fmt: skip


def test_copies_take_the_outcome_of_their_content_with_their_own_fields():
    records = _records("dirty_web") + _records("debian_licenses")
    copies = [_copy(rec, n) for n, rec in enumerate(records[::3]) if rec["kind"] == "record"]
    cleaner = RecordCleaner(load_cleaning_recipe())
    rows = cleaner.clean_many(records + copies[: len(copies) // 2])  # copies in the same call
    rows += cleaner.clean_many(copies[len(copies) // 2 :])  # and in a later one (the worker's memo)
    keys = [key for rec in records + copies if (key := content_key(rec)) is not None]
    assert memo_for(cleaner.memo_id).hits == len(keys) - len(set(keys)) >= len(copies) > 10  # the sample has copies too
    # the reference: every record cleaned alone, by a cleaner that never saw its content
    alone = [RecordCleaner(load_cleaning_recipe()).clean(rec) for rec in records + copies]
    assert rows == alone
    copied = rows[len(records) :]
    assert {"kept", "rejected"} <= {row["status"] for row in copied}  # both kinds of outcome are reused
    for row, copy in zip(copied, copies, strict=True):  # each copy keeps its own fields and metadata
        assert (row["id"], row["url"], row["offset"]) == (copy["id"], copy["url"], copy["offset"])
        assert json.loads(row["metadata"])["mirror"] == json.loads(copy["metadata"])["mirror"]
    assert any("language" in json.loads(row["metadata"]) for row in copied)  # with what cleaning added


def test_a_quarantined_outcome_is_not_reused(monkeypatch):
    """An extraction that failed may not fail again (a time limit, a flaky parser): copies are extracted anew."""
    page = "<html><body><article><p>" + "A calm page about the river and the old bridge. " * 20 + "</p></article></body></html>"
    record = {"kind": "record", "id": "p0", "url": "https://example.org/0", "content": page, "content_type": "html",
              "metadata": "{}", "raw_length": len(page), "file": "pages.warc", "offset": 0, "reason": None,
              "excerpt": None}  # fmt: skip
    cleaner = RecordCleaner(load_cleaning_recipe(), "debian_handbook")
    real = cleaner.extractor()
    calls = []

    class FailsOnce:
        def extract(self, html: str) -> str:
            calls.append(html)
            if len(calls) == 1:
                raise ValueError("parser gave up")
            return real.extract(html)

    monkeypatch.setattr(cleaner, "extractor", lambda: FailsOnce())
    rows = cleaner.clean_many([record, _copy(record, 1), _copy(record, 2)])
    assert rows[0]["status"] == QUARANTINED and rows[0]["reason"].startswith(EXTRACTION_FAILED)
    assert rows[1]["status"] != QUARANTINED and rows[2]["status"] != QUARANTINED
    assert len(calls) == 2  # the first copy was extracted again; the second took its outcome
    assert rows[2]["text"] == rows[1]["text"] and rows[2]["id"] == "p0-copy2"


def test_the_key_is_the_content_and_its_type():
    rec = {"kind": "record", "content": "<p>same bytes</p>", "content_type": "html"}
    assert content_key(rec) == content_key({**rec, "id": "other"}) and len(content_key(rec)) == 16
    assert content_key(rec) != content_key({**rec, "content_type": "text"})
    assert content_key(rec) != content_key({**rec, "content": "<p>same bytes </p>"})
    assert content_key({"kind": "quarantine", "content": None, "content_type": None}) is None
    assert content_key({**rec, "metadata": '{"http_status": 404}'}) is None  # decided by the status, not the content
    assert content_key({**rec, "metadata": '{"http_status": 200}'}) == content_key(rec)


def test_the_memo_starts_afresh_when_full_and_a_worker_keeps_few_memos():
    memo = OutcomeMemo(max_bytes=1000)
    outcome = Outcome(tuple("x" * 400 if field == "text" else None for field in CONTENT_FIELDS), {})
    memo.put(b"a", outcome)
    memo.put(b"b", outcome)
    assert memo.get(b"a") is outcome and memo.hits == 1
    memo.put(b"c", outcome)  # past 1000 characters: the memo starts afresh with c
    assert memo.get(b"a") is None and memo.get(b"c") is outcome
    memo.start_task()  # at most half full: kept
    assert memo.get(b"c") is outcome
    memo.put(b"d", outcome)
    memo.start_task()  # past half full: a task starts with an empty memo, not with a reset in its middle
    assert memo.get(b"c") is None and memo.size == 0
    outcome_memo._MEMOS.clear()
    first = memo_for("cleaner-0")
    for i in range(1, outcome_memo._KEPT_MEMOS + 1):
        memo_for(f"cleaner-{i}")
    assert "cleaner-0" not in outcome_memo._MEMOS and memo_for("cleaner-1") is not first
    assert len(outcome_memo._MEMOS) == outcome_memo._KEPT_MEMOS
