"""Ingest strictness inside the Spark job and the Dagster asset: duplicate ids, repairs, file errors."""

from __future__ import annotations

import gzip
import json
import logging
import shutil

import dagster as dg
import pyarrow.parquet as pq
import pytest

from marin_assets.core.recipes import PACKAGE_RECIPES
from marin_assets_tests.stage_definitions import cleaned_documents, counts_conserve, raw_corpus
from marin_assets.data.clean.cleaning_job import clean_source
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.sources.source_inventory import source_inventory
from marin_assets.data.sources.source_registry import SourceSpec, load_sources
from marin_assets.resources.storage_resource import StorageResource
from marin_assets_tests.local_resources import spark_resources
from marin_assets_tests.data.registry_fixture import source_entry, write_registry  # noqa: F401 (fixture)
from marin_assets_tests.data.test_filters import SENTENCES
from marin_assets_tests.recipe_edits import without_trained_curation

pytestmark = pytest.mark.slow


def _doc(doc_id: str, i: int, text: str | None = None) -> bytes:
    body = text or " ".join(SENTENCES[i % 8 :] + SENTENCES[: i % 8]) + f" Note {i}."
    return json.dumps({"id": doc_id, "text": body}).encode() + b"\n"


def _hostile_folder(root):
    """Two gz files sharing ids, one with a lone surrogate, one with a damaged second member; a README."""
    root.mkdir()
    a = gzip.compress(b"".join(_doc(f"id-{i}", i) for i in range(6)), mtime=0)
    (root / "a.jsonl.gz").write_bytes(a)
    first = gzip.compress(_doc("id-1", 11) + _doc("id-9", 9, "A lone \ud800 surrogate. " + " ".join(SENTENCES)), mtime=0)
    second = bytearray(gzip.compress(b"".join(_doc(f"lost-{i}", i) for i in range(50)), mtime=0))
    second[len(second) // 2 : len(second) // 2 + 8] = b"\xff" * 8
    third = gzip.compress(_doc("id-0", 12) + _doc("id-20", 20), mtime=0)
    (root / "b.jsonl.gz").write_bytes(first + bytes(second) + third)
    (root / "README").write_text("where this came from")
    return len(first), len(second)


def _recipe():
    shipped = load_cleaning_recipe()
    return shipped.model_copy(update={
        "language": shipped.language.model_copy(update={"allowlist": []}),
        "dedup": shipped.dedup.model_copy(update={"exact": False, "near": False}),
        "spark": shipped.spark.model_copy(update={"partitions": 2}),
    })  # fmt: skip


def test_duplicate_ids_are_quarantined_across_files_and_losses_are_counted(spark, tmp_path):
    first_len, second_len = _hostile_folder(tmp_path / "src")
    spec = SourceSpec(name="hostile", uri=str(tmp_path / "src"), format="jsonl.gz", license="CC0-1.0")
    stats = clean_source(spark, spec, _recipe(), str(tmp_path / "out"))
    kept = pq.read_table(tmp_path / "out" / "documents").to_pylist()
    rejected = pq.read_table(tmp_path / "out" / "rejected").to_pylist()
    quarantined = pq.read_table(tmp_path / "out" / "quarantine").to_pylist()
    ids = [r["id"] for r in kept + rejected]
    assert len(ids) == len(set(ids))  # never two documents with one id
    dups = sorted(q["reason"] for q in quarantined if q["reason"].startswith("duplicate_id"))
    assert dups == ["duplicate_id: id-0 (first at a.jsonl.gz@0)", f"duplicate_id: id-1 (first at a.jsonl.gz@{len(_doc('id-0', 0))})"]
    assert stats["quarantined_by_reason"]["duplicate_id"] == 2
    assert {"id-20", "id-9"} <= {r["id"] for r in kept}  # read again after the damaged member
    assert stats["repaired_by_reason"] == {"lone_surrogate": 1}
    assert '"_repairs": {"lone_surrogate": 1}' in next(r["metadata"] for r in kept + rejected if r["id"] == "id-9")
    errors = {(e["file"], e["reason"].split(":")[0], e["lost_bytes"]) for e in stats["file_errors"]}
    assert ("b.jsonl.gz", "corrupt_stream", second_len) in errors and ("README", "skipped", None) in errors
    assert stats["conserved"] and stats["records_in"] == len(kept) + len(rejected) + len(quarantined)


def test_file_errors_are_a_metadata_table_and_a_warning_per_file(tmp_path, write_registry, spark_resource):
    _hostile_folder(tmp_path / "src")
    recipes = write_registry([source_entry("dirty_web", str(tmp_path / "src"), fmt="jsonl.gz")])
    shutil.copy(PACKAGE_RECIPES / "cleaning.yaml", recipes / "cleaning.yaml")
    without_trained_curation(recipes / "cleaning.yaml")  # this test is about ingest, not curation
    entry = source_entry("dirty_web", str(tmp_path / "src"), fmt="jsonl.gz")
    entry["provenance"]["checksum"] = source_inventory(load_sources().get("dirty_web"))["content_hash"]
    write_registry([entry])
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(
        [raw_corpus, cleaned_documents, counts_conserve],
        resources={"storage": StorageResource(root_uri=str(tmp_path / "store")), **spark_resources(spark_resource)},
        partition_key="dirty_web",
        instance=instance,
    )
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key == cleaned_documents.key]
    table = event.materialization.metadata["file_errors"].value
    rows = {(r.data["file"], r.data["reason"].split(":")[0]) for r in table.records}
    assert rows == {("b.jsonl.gz", "corrupt_stream"), ("README", "skipped")}
    assert event.materialization.metadata["quarantined[duplicate_id]"].value == 2
    assert event.materialization.metadata["repaired[lone_surrogate]"].value == 1
    logs = [r.user_message for r in instance.all_logs(result.run_id) if r.level == logging.WARNING]
    assert sum("b.jsonl.gz" in m and "corrupt_stream" in m for m in logs) == 1, logs
    assert sum("README" in m and "skipped" in m for m in logs) == 1
    assert all(c.passed for c in result.get_asset_check_evaluations())
