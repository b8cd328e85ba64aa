"""The Spark cleaning job on the real sample sources: counts, dedup, extraction, determinism."""

import pyarrow.parquet as pq
import pytest

from marin_assets.core.storage import Storage
from marin_assets.data.cleaning_job import EXACT_DUPLICATE, NEAR_DUPLICATE, clean_source
from marin_assets.data.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.sources import load_sources

pytestmark = pytest.mark.slow


def _recipe(min_sentences: int = 5):
    shipped = load_cleaning_recipe()
    # The sample's clean paragraphs have 4 sentences: lower C4's minimum so dedup has documents to act on.
    filters = shipped.filters.model_copy(update={"c4": shipped.filters.c4.model_copy(update={"min_num_sentences": min_sentences})})
    return shipped.model_copy(update={"filters": filters, "spark": shipped.spark.model_copy(update={"partitions": 2})})


def _rows(out, table):
    return pq.read_table(out / table).to_pylist()


def test_dirty_web_counts_dedup_and_determinism(spark, tmp_path):
    spec = load_sources().get("dirty_web")
    recipe = _recipe(min_sentences=3)
    stats = clean_source(spark, spec, recipe, str(tmp_path / "a"))

    kept = {r["id"]: r for r in _rows(tmp_path / "a", "documents")}
    rejected = {r["id"]: r["reason"] for r in _rows(tmp_path / "a", "rejected")}
    quarantined = _rows(tmp_path / "a", "quarantine")
    assert stats["records_in"] == 49 == len(kept) + len(rejected) + len(quarantined)
    assert stats["conserved"] and stats["kept"] == len(kept) and stats["quarantined"] == 6
    assert {q["reason"].split(":")[0] for q in quarantined} == {"malformed_json", "invalid_utf8", "missing_field",
                                                               "bad_field", "empty_line"}  # fmt: skip
    assert all(q["file"] == "dirty_web.jsonl.gz" and q["source"] == "dirty_web" for q in quarantined)
    # Exact and near duplicates lose to the smallest id of their cluster.
    assert {i: rejected[i] for i in rejected if i.startswith("exact-dup")} == {f"exact-dup-0{i}": EXACT_DUPLICATE for i in range(4)}
    assert all(rejected[i] == NEAR_DUPLICATE for i in rejected if i.startswith("near-dup"))
    assert {"clean-00", "clean-01", "clean-02", "clean-03"} <= kept.keys()
    assert all(rejected[f"non-english-0{i}"].startswith("language:") for i in range(5))
    assert stats["rejected_by_rule"][EXACT_DUPLICATE] == 4
    assert kept["clean-00"]["source"] == "dirty_web" and '"language": "en"' in kept["clean-00"]["metadata"]
    assert list(kept) == sorted(kept)  # rows sorted by id

    # Same input, same recipe: byte-identical outputs.
    assert clean_source(spark, spec, recipe, str(tmp_path / "b")) == stats
    store = Storage(str(tmp_path))
    assert store.list_files("a") == store.list_files("b")
    assert store.content_hash("a") == store.content_hash("b")


def test_html_source_is_extracted_inside_spark(spark, tmp_path):
    stats = clean_source(spark, load_sources().get("python_docs"), _recipe(), str(tmp_path))
    docs = _rows(tmp_path, "documents")
    assert stats["records_in"] == 46 and stats["conserved"] and docs
    assert all("<" not in d["text"][:200] and "</" not in d["text"] for d in docs)
    assert all(d["raw_length"] > len(d["text"]) for d in docs)  # markup removed
