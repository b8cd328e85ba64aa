"""cleaned_documents + counts_conserve materialized with Dagster; the uncleared-source refusal."""

import json

import dagster as dg
import pytest

from marin_assets_tests.stage_definitions import (
    cleaned_documents, counts_conserve, eval_set, quality_classifier, raw_corpus,
)
from marin_assets.data.sources.source_inventory import source_inventory
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.defs.evaluation.decontamination_assets import build_decontamination_asset
from marin_assets.evaluation.task_sets import load_task_sets
from marin_assets_tests.local_resources import spark_resources
from marin_assets_tests.data.reference_sources import ingest_reference_sources
from marin_assets_tests.data.registry_fixture import source_entry, write_registry  # noqa: F401 (fixture)


def _materialize(tmp_path, assets, spark_resource, partition="dirty_web"):
    return dg.materialize(
        assets,
        resources={"storage": StorageResource(root_uri=str(tmp_path / "store")), **spark_resources(spark_resource)},
        partition_key=partition,
        instance=dg.DagsterInstance.ephemeral(),
        raise_on_error=False,
    )


def _curation_inputs(tmp_path, spark_resource):
    """What cleaned_documents reads besides its source: the eval-set and task-set indexes and the quality model."""
    assert _materialize(tmp_path, [eval_set], spark_resource, "handbook_passages").success
    assert _materialize(tmp_path, [build_decontamination_asset(load_task_sets())], spark_resource, None).success
    ingest_reference_sources(tmp_path / "store")
    assert _materialize(tmp_path, [quality_classifier], spark_resource, None).success


@pytest.mark.slow
def test_cleaned_documents_materializes_with_per_rule_counts_and_conserving_check(tmp_path, spark_resource):
    _curation_inputs(tmp_path, spark_resource)
    result = _materialize(tmp_path, [raw_corpus, cleaned_documents, counts_conserve], spark_resource)
    assert result.success
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key == cleaned_documents.key]
    metadata = event.materialization.metadata
    out = tmp_path / "store" / "cleaned" / "dirty_web"
    stats = json.loads((out / "stats.json").read_text())
    assert metadata["records_in"].value == stats["records_in"] == 49
    assert metadata["quarantined[malformed_json]"].value == 2
    assert not [k for k in metadata if k.startswith("rejected[")]  # one table, not a row per rule
    rules = metadata["rejected_by_rule"]
    assert [c.name for c in rules.schema.columns] == ["rule", "stage", "rejected", "share"]
    per_rule = {r.data["rule"]: r.data["rejected"] for r in rules.records}
    assert per_rule == stats["rejected_by_rule"] and sum(per_rule.values()) == stats["rejected"]
    assert all(r.data["stage"] == r.data["rule"].split(":")[0] for r in rules.records)
    assert [r.data["rejected"] for r in rules.records] == sorted(per_rule.values(), reverse=True)  # largest first
    assert sum(r.data["share"] for r in rules.records) == pytest.approx(stats["rejected"] / 49, abs=1e-3)
    examples = metadata["rejected_examples"]  # a table: per rule, a few documents and the value that tripped it
    assert isinstance(examples, dg.TableMetadataValue)
    assert [c.name for c in examples.schema.columns] == ["rule", "id", "url", "excerpt", "value"]
    assert {r.data["rule"] for r in examples.records} == set(per_rule)
    assert len(examples.records) == sum(min(3, n) for n in per_rule.values())
    assert "rejected_examples" not in stats  # stats.json stays counts only
    assert (out / "_COMMITTED").exists() and (out / "documents" / "part-00000.parquet").exists()
    [check] = result.get_asset_check_evaluations()
    assert check.passed and check.metadata["accounted"].value == 49 == check.metadata["records_counted"].value
    assert check.description.startswith("49 records in the raw files = ")
    assert event.materialization.tags["dagster/data_version"] == json.loads((out / "_provenance.json").read_text())[
        "output_hash"
    ]


def test_uncleared_source_is_refused(tmp_path, write_registry, spark_resource):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.jsonl").write_text('{"id": "1", "text": "text of unknown origin"}\n')
    entry = source_entry("dirty_web", str(tmp_path / "src" / "*.jsonl"), license="NOASSERTION")
    write_registry([entry])
    entry["provenance"]["checksum"] = source_inventory(load_sources().get("dirty_web"))["content_hash"]
    write_registry([entry])
    assert _materialize(tmp_path, [raw_corpus], spark_resource).success  # inventory says: not cleared

    result = _materialize(tmp_path, [cleaned_documents], spark_resource)
    assert not result.success
    [failure] = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert "not cleared for use" in failure.event_specific_data.error.to_string()
    assert "NOASSERTION" in failure.event_specific_data.error.to_string()
    assert not (tmp_path / "store" / "cleaned" / "dirty_web").exists()


@pytest.mark.slow
def test_a_reader_that_drops_a_record_fails_counts_conserve(tmp_path, spark_resource, monkeypatch):
    """The cleaner's own counts still add up (it never saw the record); the independent count does not."""
    from marin_assets.data.formats import record_batches
    original = record_batches.read_file

    def drops_the_third_record(path, spec, max_record_bytes):  # pickled by value into the Spark workers
        for i, record in enumerate(original(path, spec, max_record_bytes)):
            if i != 2:
                yield record

    monkeypatch.setattr(record_batches, "read_file", drops_the_third_record)
    _curation_inputs(tmp_path, spark_resource)
    result = _materialize(tmp_path, [raw_corpus, cleaned_documents, counts_conserve], spark_resource)
    assert not result.success  # the check is blocking
    stats = json.loads((tmp_path / "store" / "cleaned" / "dirty_web" / "stats.json").read_text())
    assert stats["records_in"] == 48 and stats["records_counted"] == 49 and not stats["conserved"]
    [check] = result.get_asset_check_evaluations()
    assert not check.passed
    assert check.description.startswith("1 record(s) lost: the raw files hold 49 records (counted per file by "
                                        "format), the cleaner read 48, the output holds 48 (")
    reader_counts = json.loads((tmp_path / "store" / "cleaned" / "dirty_web" / "reader_counts.json").read_text())
    assert reader_counts == {"dirty_web.jsonl.gz": 49}
