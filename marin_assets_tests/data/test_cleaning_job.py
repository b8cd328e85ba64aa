"""The Spark cleaning job on the real sample sources: counts, dedup, extraction, determinism."""

import re

import pyarrow.parquet as pq
import pytest

from marin_assets.core.storage import Storage
from marin_assets.data.clean.cleaning_job import EXACT_DUPLICATE, NEAR_DUPLICATE, clean_source
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.sources.source_registry import load_sources

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
    assert stats["records_in"] == 49 == len(kept) + len(rejected) + len(quarantined) + stats["ignored"]
    assert stats["conserved"] and stats["kept"] == len(kept) and stats["quarantined"] == 5
    assert stats["ignored"] == 1 and stats["ignored_by_reason"] == {"blank_line": 1}  # a blank line is no record
    assert {q["reason"].split(":")[0] for q in quarantined} == {"malformed_json", "invalid_utf8", "missing_field",
                                                               "bad_field"}  # fmt: skip
    assert all(q["file"] == "dirty_web.jsonl.gz" and q["source"] == "dirty_web" for q in quarantined)
    # Exact and near duplicates lose to the smallest id of their cluster.
    assert {i: rejected[i] for i in rejected if i.startswith("exact-dup")} == {f"exact-dup-0{i}": EXACT_DUPLICATE for i in range(4)}
    assert all(rejected[i] == NEAR_DUPLICATE for i in rejected if i.startswith("near-dup"))
    assert {"clean-00", "clean-01", "clean-02", "clean-03"} <= kept.keys()
    assert all(rejected[f"non-english-0{i}"].startswith("language:") for i in range(5))
    assert stats["rejected_by_rule"][EXACT_DUPLICATE] == 4
    assert kept["clean-00"]["source"] == "dirty_web" and '"language": "en"' in kept["clean-00"]["metadata"]
    assert list(kept) == sorted(kept)  # rows sorted by id
    # What users see: per rule, up to 3 rejected documents (smallest ids) with the value that tripped the rule.
    examples = stats["rejected_examples"]
    by_rule = {rule: [e for e in examples if e["rule"] == rule] for rule in stats["rejected_by_rule"]}
    assert sum(len(v) for v in by_rule.values()) == len(examples)
    assert all(len(v) == min(3, stats["rejected_by_rule"][rule]) for rule, v in by_rule.items())
    assert all(e["id"] in rejected and e["excerpt"] for e in examples)
    assert all(e["value"].startswith("same text as ") for e in by_rule[EXACT_DUPLICATE])
    language = [e for e in examples if e["rule"].startswith("language:")]
    assert language and all(re.fullmatch(r"[a-z]{2,3} [01]\.\d+", e["value"]) for e in language)
    measured = [e for e in examples if e["rule"].startswith(("gopher_", "fineweb:", "c4:too_few"))]
    assert measured and all(e["value"] is not None for e in measured)

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


def test_slow_page_is_quarantined_inside_spark_and_the_partition_goes_on(spark, tmp_path):
    from marin_assets.data.formats.warc import warc_resource_record
    from marin_assets.data.sources.source_registry import SourceSpec
    from marin_assets_tests.data.test_extraction_timeout import calm_page, deep_page

    # One WARC, so all three pages are in one partition: the slow one in the middle.
    pages = [calm_page(), deep_page(), calm_page().replace("calm", "quiet")]
    warc = b"".join(warc_resource_record(f"https://example.org/{i}", p.encode(), date="2026-01-01T00:00:00Z")
                    for i, p in enumerate(pages))  # fmt: skip
    (tmp_path / "pages.warc").write_bytes(warc)
    spec = SourceSpec(name="pages", uri=str(tmp_path / "pages.warc"), format="warc", license="CC0-1.0")
    recipe = _recipe()
    recipe = recipe.model_copy(update={"extraction": recipe.extraction.model_copy(update={"timeout_seconds": 1.0}),
                                       "spark": recipe.spark.model_copy(update={"partitions": 1})})  # fmt: skip
    stats = clean_source(spark, spec, recipe, str(tmp_path / "out"))
    assert stats["records_in"] == 3 and stats["conserved"]
    assert stats["quarantined_by_reason"] == {"extraction_timeout": 1}
    [q] = _rows(tmp_path / "out", "quarantine")
    assert q["file"] == "pages.warc" and q["reason"] == "extraction_timeout: exceeded 1 s of CPU time"
    assert stats["kept"] + stats["rejected"] == 2  # the pages after the slow one were cleaned too


def test_reader_counts_come_from_the_read_tasks_and_missing_files_are_counted_again(spark, tmp_path):
    from marin_assets.data.clean.cleaning_job import count_source_records
    from marin_assets.data.sources.source_registry import SourceSpec

    for name, lines in (("a.jsonl", 2), ("b.jsonl", 3)):
        (tmp_path / name).write_text("".join(f'{{"id": "{name}{i}", "text": "t"}}\n' for i in range(lines)))
    spec = SourceSpec(name="s", uri=f"{tmp_path}/*.jsonl", format="jsonl", license="CC0-1.0")
    files = [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]
    # b.jsonl never reached the accumulator (its read task's count is lost): a job counts it, a's count stands
    assert count_source_records(spark, spec, files, {"a.jsonl": 7}) == {"a.jsonl": 7, "b.jsonl": 3}
    stats = clean_source(spark, spec, _recipe(), str(tmp_path / "out"))
    assert stats["reader_counts"] == {"a.jsonl": 2, "b.jsonl": 3} and stats["conserved"]


def test_tables_of_long_texts_are_split_by_bytes_and_hold_the_same_rows(spark, tmp_path):
    spec = load_sources().get("dirty_web")
    recipe = _recipe(min_sentences=3)
    one = clean_source(spark, spec, recipe, str(tmp_path / "one"))
    small = recipe.model_copy(update={"spark": recipe.spark.model_copy(update={"bytes_per_file": 2_000})})
    split = clean_source(spark, spec, small, str(tmp_path / "split"))
    assert split == one
    for table in ("documents", "rejected"):
        assert len(list((tmp_path / "one" / table).glob("*.parquet"))) == 1
        files = sorted((tmp_path / "split" / table).glob("*.parquet"))
        text_bytes = sum(len((r["text"] or "").encode()) for r in _rows(tmp_path / "one", table))
        # the tallies estimate a duplicate's bytes from the kept texts' mean, so the count is near bytes / cap
        assert len(files) >= max(2, text_bytes // 2_000 - 3), (table, len(files), text_bytes)
        assert sorted(r["id"] for f in files for r in pq.read_table(f).to_pylist()) == sorted(
            r["id"] for r in _rows(tmp_path / "one", table))


def test_outputs_do_not_depend_on_how_many_processing_partitions_the_source_gets(spark, tmp_path):
    spec = load_sources().get("dirty_web")
    recipe = _recipe(min_sentences=3)
    few = clean_source(spark, spec, recipe, str(tmp_path / "few"))
    # a tiny partition_bytes: the source's few KB get many partitions (as a large corpus would)
    many = recipe.model_copy(update={"spark": recipe.spark.model_copy(update={"partition_bytes": 512})})
    from marin_assets.data.formats.readers import list_source_files
    from marin_assets.data.sources.source_files import estimated_record_bytes

    assert many.spark.partitions_for(estimated_record_bytes(list_source_files(spec))) > 2 * recipe.spark.partitions
    assert clean_source(spark, spec, many, str(tmp_path / "many")) == few
    store = Storage(str(tmp_path))
    assert store.list_files("few") == store.list_files("many")
    assert store.content_hash("few") == store.content_hash("many")
