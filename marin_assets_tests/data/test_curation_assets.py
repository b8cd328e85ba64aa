"""eval_set, quality_classifier, cleaned_documents (with its curation steps), dedup_precision and
data_report materialized together with Dagster on the shipped dirty_web sample."""

import json

import dagster as dg
import pyarrow.parquet as pq
import pytest

from marin_assets_tests.stage_definitions import (
    cleaned_documents, counts_conserve, data_report, dedup_precision, eval_set, quality_classifier, raw_corpus,
)
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.defs.evaluation.decontamination_assets import build_decontamination_asset
from marin_assets.evaluation.task_sets import load_task_sets
from marin_assets_tests.data.reference_sources import ingest_reference_sources
from marin_assets_tests.local_resources import spark_resources

pytestmark = pytest.mark.slow


def _run(store, assets, spark_resource, partition=None):
    result = dg.materialize(
        assets,
        resources={"storage": StorageResource(root_uri=str(store)), **spark_resources(spark_resource)},
        partition_key=partition,
        instance=dg.DagsterInstance.ephemeral(),
    )
    assert result.success
    return result


def _metadata(result, asset):
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key == asset.key]
    return event.materialization


def test_curation_assets_materialize_on_the_sample(tmp_path, spark_resource):
    store = tmp_path / "store"
    evaluated = _run(store, [eval_set], spark_resource, "handbook_passages")
    index = json.loads((store / "eval" / "handbook_passages" / "index.json").read_text())
    assert index["items"] == 24 and index["ngram"] == 13 and index["ngrams"] > 24 * 40
    assert _metadata(evaluated, eval_set).metadata["ngrams"].value == index["ngrams"]

    _run(store, [build_decontamination_asset(load_task_sets())], spark_resource)  # the task sets' items
    ingest_reference_sources(store)
    trained = _metadata(_run(store, [quality_classifier], spark_resource), quality_classifier)
    model = (store / "quality_classifier" / "model.bin").read_bytes()
    assert trained.tags["dagster/data_version"] == trained.metadata["model_sha256"].value
    labels = {r.data["label"]: r.data["count"] for r in trained.metadata["label_counts"].records}  # a table
    assert trained.metadata["accuracy"].value >= 0.8 and labels["__label__lq"] > 0
    features = trained.metadata["top_features"]  # a table: label side, word, weight (numeric)
    assert {r.data["pushes_towards"] for r in features.records} == {"positive", "negative"}
    assert [c.type for c in features.schema.columns] == ["string", "string", "float"]
    # Seeded, one thread: retraining gives the same model bytes, hence the same data version.
    ingest_reference_sources(tmp_path / "again")
    retrained = _metadata(_run(tmp_path / "again", [quality_classifier], spark_resource), quality_classifier)
    assert retrained.tags["dagster/data_version"] == trained.tags["dagster/data_version"]
    assert (tmp_path / "again" / "quality_classifier" / "model.bin").read_bytes() == model

    cleaned = _run(store, [raw_corpus, cleaned_documents, counts_conserve, dedup_precision, data_report],
                   spark_resource, "dirty_web")  # fmt: skip
    checks = {c.check_name: c for c in cleaned.get_asset_check_evaluations()}
    assert checks["counts_conserve"].passed
    assert checks["dedup_precision"].passed and checks["dedup_precision"].metadata["pairs_sampled"].value > 0
    stats = json.loads((store / "cleaned" / "dirty_web" / "stats.json").read_text())
    docs = pq.read_table(store / "cleaned" / "dirty_web" / "documents").to_pylist()
    assert docs and all(0.0 <= d["quality_score"] <= 1.0 for d in docs)  # every kept document is scored
    meta = _metadata(cleaned, cleaned_documents).metadata
    assert meta["curation[quality:scored]"].value == stats["curation_counts"]["quality:scored"] >= len(docs)

    report = _metadata(cleaned, data_report).metadata
    assert "data:image/png;base64," in report["report"].value
    # the UI's order: headline numbers, a plot legible inline (text bars), tables; raw JSON only for provenance
    assert list(report)[:6] == ["records_in", "kept", "rejected", "quarantined", "kept_share", "funnel_plot"]
    assert report["kept_share"].value == round(stats["kept"] / stats["records_in"], 3)
    assert "█" in report["funnel_plot"].value and len(report["funnel_plot"].value) < 1000
    assert [c.name for c in report["funnel"].schema.columns] == ["stage", "removed", "remaining"]
    assert report["funnel"].records[0].data == {"stage": "read", "removed": 0, "remaining": 49}
    assert [c.type for c in report["lengths"].schema.columns] == ["int", "int", "int", "int"]
    assert [k for k, v in report.items() if isinstance(v, dg.JsonMetadataValue)] == ["provenance"]
    out = store / "reports" / "dirty_web"
    assert {"report.md", "report.json", "funnel.png", "lengths.png", "languages.png"} <= {p.name for p in out.iterdir()}
    built = json.loads((out / "report.json").read_text())
    assert built["funnel"][0] == {"stage": "read", "removed": 0, "remaining": 49}
    assert built["funnel"][-1]["remaining"] == stats["kept"]
    assert built["duplicate_cluster_sizes"] and built["quality_scores"]["scored"] == len(docs)
    assert sum(n * int(size) for size, n in built["duplicate_cluster_sizes"].items()) - sum(
        built["duplicate_cluster_sizes"].values()) == stats["rejected_by_rule"].get("dedup:exact_duplicate", 0) + stats[
        "rejected_by_rule"].get("dedup:near_duplicate", 0)  # every removed duplicate is in a cluster with its keeper
