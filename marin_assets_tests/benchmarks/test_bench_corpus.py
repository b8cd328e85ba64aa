"""The benchmark corpus builder: same bytes twice, planted duplicates listed and really planted."""

from __future__ import annotations

import glob
import importlib.util
import json
from pathlib import Path

import pytest

from marin_assets.data.formats.warc import read_warc

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "make_bench_corpus.py"
pytestmark = pytest.mark.skipif(
    not glob.glob("/usr/share/doc/*/copyright"), reason="no Debian documentation under /usr/share/doc on this machine"
)


def _builder():
    spec = importlib.util.spec_from_file_location("make_bench_corpus", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _documents(folder: Path) -> dict[str, str]:
    docs = {}
    for shard in sorted(folder.glob("text/*.jsonl")):
        docs.update((d["id"], d["text"]) for d in map(json.loads, shard.read_text().splitlines()))
    for shard in sorted(folder.glob("html/*.warc.gz")):
        for rec in read_warc(str(shard), source="bench", max_record_bytes=2**24):
            docs[rec.id.removeprefix("urn:marin-bench:")] = rec.content
    return docs


@pytest.mark.slow  # renders a few dozen man pages with groff, twice
def test_same_bytes_twice_and_planted_duplicates_listed(tmp_path):
    builder = _builder()
    first = builder.build(200, tmp_path / "a", docs_per_shard=50)
    builder.build(200, tmp_path / "b", docs_per_shard=50)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")

    docs = _documents(tmp_path / "a")
    assert len(docs) == first["docs"] == 200
    assert sum(s["docs"] for s in first["shards"]) == 200
    assert {k.split(":")[1] for k in first["counts"] if "duplicate" not in k} >= {"changelog", "copyright", "html"}
    planted = [json.loads(line) for line in (tmp_path / "a" / "planted_duplicates.jsonl").read_text().splitlines()]
    assert planted and len(planted) == first["planted"]["exact"] + first["planted"]["near"]
    for dup in planted:
        assert dup["of"] < dup["id"]  # dedup keeps the smallest id: the original
        changed = sum(a != b for a, b in zip(docs[dup["id"]].split(), docs[dup["of"]].split(), strict=True))
        assert changed == dup["words_changed"] if dup["kind"] == "near" else docs[dup["id"]] == docs[dup["of"]]
    assert any(d["kind"] == "near" and 3 <= d["words_changed"] <= 6 for d in planted)
