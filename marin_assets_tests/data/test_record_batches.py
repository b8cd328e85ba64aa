"""The cleaning job's read step without Spark: file paths in, Arrow batches of the readers' records out."""

import json

import pyarrow as pa

from marin_assets.data.formats import record_batches as rb
from marin_assets.data.clean.cleaning_rows import RECORD_COLUMNS, record_tuple
from marin_assets.data.formats.readers import read_file
from marin_assets.data.sources.source_registry import SourceSpec


def _source(tmp_path, lines: list[str]) -> tuple[SourceSpec, list[str]]:
    (tmp_path / "a.jsonl").write_text("\n".join(lines[:3]) + "\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.jsonl").write_text("\n".join(lines[3:]) + "\n")
    spec = SourceSpec(name="s", uri=f"{tmp_path}/**/*.jsonl", format="jsonl", license="CC0-1.0")
    return spec, [str(tmp_path / "a.jsonl"), str(tmp_path / "sub" / "b.jsonl")]


def test_batches_hold_the_readers_records_with_their_quarantine_rows(tmp_path, monkeypatch):
    docs = [json.dumps({"id": f"d{i}", "text": "x" * (10 + i), "lang": "en"}) for i in range(6)]
    spec, files = _source(tmp_path, docs[:2] + ["{not json"] + docs[2:] + ["", json.dumps({"no_text": 1})])
    monkeypatch.setattr(rb, "BATCH_ROWS", 2)  # batches cut inside a file, and at each file's end
    paths = [pa.RecordBatch.from_pydict({"path": files[:1]}), pa.RecordBatch.from_pydict({"path": files[1:]})]
    batches = list(rb.record_batches(spec, 1 << 20)(paths))
    assert [b.num_rows for b in batches] == [2, 1, 2, 2, 2]
    assert all(b.schema == rb.record_arrow_schema() for b in batches)
    got = pa.Table.from_batches(batches).to_pylist()
    names = {files[0]: "a.jsonl", files[1]: "sub/b.jsonl"}
    expected = [dict(zip(RECORD_COLUMNS, record_tuple(r, names[f]))) for f in files for r in read_file(f, spec, 1 << 20)]
    assert got == expected
    assert [(r["kind"], (r["reason"] or "").split(":")[0]) for r in got if r["kind"] != "record"] == [
        ("quarantine", "malformed_json"), ("ignored", "blank_line"), ("quarantine", "missing_field")]


def test_a_batch_is_cut_by_text_size_too(tmp_path, monkeypatch):
    docs = [json.dumps({"id": f"d{i}", "text": "y" * 100}) for i in range(6)]
    spec, files = _source(tmp_path, docs)
    monkeypatch.setattr(rb, "BATCH_CHARS", 250)  # three texts of 100 characters pass it
    batches = list(rb.record_batches(spec, 1 << 20)([pa.RecordBatch.from_pydict({"path": files})]))
    assert [b.num_rows for b in batches] == [3, 3]


class _Added:
    """Stands in for a Spark accumulator: what the read tasks add, merged by FileCounts."""

    def __init__(self) -> None:
        self.value = rb.FileCounts().zero({})

    def add(self, more: dict) -> None:
        self.value = rb.FileCounts().addInPlace(self.value, more)


def test_the_read_tasks_count_each_file_apart_from_the_readers(tmp_path, monkeypatch):
    docs = [json.dumps({"id": f"d{i}", "text": "z" * 20}) for i in range(6)]
    spec, files = _source(tmp_path, docs[:2] + ["{not json"] + docs[2:])
    monkeypatch.setattr(rb, "read_file", lambda path, spec, max_bytes: iter(()))  # a reader that loses everything
    counted = _Added()
    assert list(rb.record_batches(spec, 1 << 20, counted)([pa.RecordBatch.from_pydict({"path": files})])) == []
    assert counted.value == {"a.jsonl": 3, "sub/b.jsonl": 4}  # the count still sees every line


def test_file_counts_merge_a_rerun_task_without_double_counting():
    merged = rb.FileCounts().addInPlace({"a.jsonl": 3}, {"b.jsonl": 4})
    assert rb.FileCounts().addInPlace(merged, {"a.jsonl": 3}) == {"a.jsonl": 3, "b.jsonl": 4}
