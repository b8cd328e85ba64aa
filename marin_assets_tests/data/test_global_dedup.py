"""Dedup scope on real files: a document in two sources survives twice per source, once globally."""

from __future__ import annotations

import gzip
import json

import pyarrow.parquet as pq
import pytest

from marin_assets.data.clean.cleaning_job import EXACT_DUPLICATE, clean_sources
from marin_assets.data.formats.readers import list_source_files
from marin_assets.data.sources.source_registry import SourceSpec, load_sources
from marin_assets_tests.data.test_cleaning_job import _recipe

pytestmark = pytest.mark.slow


def _sample_documents() -> dict[str, dict]:
    """The clean documents of the dirty_web sample (the lines that are valid JSON objects)."""
    [path] = list_source_files(load_sources().get("dirty_web"))
    docs = {}
    for line in gzip.open(path, "rb"):
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict) and str(doc.get("id", "")).startswith("clean-0"):
            docs[doc["id"]] = doc
    return docs


def _source(tmp_path, name: str, docs: list[dict]) -> SourceSpec:
    path = tmp_path / name / f"{name}.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return SourceSpec(name=name, uri=str(path), format="jsonl", license="CC0-1.0")


def test_global_scope_keeps_a_document_of_two_sources_once_and_names_the_kept_one(spark, tmp_path):
    docs = _sample_documents()
    web = _source(tmp_path, "web", [docs["clean-00"], docs["clean-01"], docs["clean-02"]])
    mirror = _source(tmp_path, "mirror", [{**docs["clean-00"], "id": "m-00"},  # same text, another id
                                          docs["clean-01"],  # same text and id, another source
                                          docs["clean-03"]])  # fmt: skip
    recipe = _recipe(min_sentences=3)
    out = {scope: {name: str(tmp_path / scope / name) for name in ("web", "mirror")} for scope in ("source", "global")}
    for scope, dirs in out.items():
        scoped = recipe.model_copy(update={"dedup": recipe.dedup.model_copy(update={"scope": scope})})
        stats = clean_sources(spark, [web, mirror], scoped, dirs)
        assert all(s["conserved"] for s in stats.values())

    def ids(scope, name, table):
        return sorted(r["id"] for r in pq.read_table(f"{out[scope][name]}/{table}").to_pylist())

    assert ids("source", "web", "documents") == ["clean-00", "clean-01", "clean-02"]
    assert ids("source", "mirror", "documents") == ["clean-01", "clean-03", "m-00"]
    # Globally each text survives once: the smallest (id, source) keeps it ("mirror" < "web").
    assert ids("global", "web", "documents") == ["clean-00", "clean-02"]
    assert ids("global", "mirror", "documents") == ["clean-01", "clean-03"]

    def rejected(name):
        rows = pq.read_table(f"{out['global'][name]}/rejected").to_pylist()
        return {r["id"]: (r["reason"], r["kept_source"], r["kept_id"]) for r in rows}

    assert rejected("mirror") == {"m-00": (EXACT_DUPLICATE, "web", "clean-00")}
    assert rejected("web") == {"clean-01": (EXACT_DUPLICATE, "mirror", "clean-01")}
