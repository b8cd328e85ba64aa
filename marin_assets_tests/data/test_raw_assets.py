"""raw_corpus + its blocking compliance check, materialized for real with Dagster."""

import json

import dagster as dg
import pytest

from marin_assets.data.sources.source_inventory import source_inventory
from marin_assets_tests.stage_definitions import compliance, raw_corpus
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.resources.storage_resource import StorageResource
from marin_assets_tests.data.registry_fixture import source_entry, write_registry  # noqa: F401 (fixture)


@dg.asset(partitions_def=raw_corpus.partitions_def, deps=[raw_corpus], group_name="data")
def downstream_of_raw(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"ran_for": context.partition_key})


def materialize(tmp_path, instance, partition, assets=(raw_corpus, compliance, downstream_of_raw)):
    return dg.materialize(
        list(assets),
        resources={"storage": StorageResource(root_uri=str(tmp_path / "store"))},
        partition_key=partition,
        instance=instance,
        raise_on_error=False,
    )


def materialized(result: dg.ExecuteInProcessResult) -> list[str]:
    return sorted(e.asset_key.to_user_string() for e in result.get_asset_materialization_events())


def data_version(result: dg.ExecuteInProcessResult) -> str:
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key == raw_corpus.key]
    return event.materialization.tags["dagster/data_version"]


def test_shipped_source_is_inventoried_cleared_and_versioned_by_its_files(tmp_path):
    instance = dg.DagsterInstance.ephemeral()
    result = materialize(tmp_path, instance, "dirty_web")
    assert result.success
    assert materialized(result) == ["downstream_of_raw", "raw_corpus"]
    [check] = result.get_asset_check_evaluations()
    assert check.passed and check.partition == "dirty_web"
    inventory = json.loads((tmp_path / "store" / "raw" / "dirty_web" / "inventory.json").read_text())
    assert inventory["compliance"] == {"cleared": True, "problems": [], "reasons": []}
    assert [f["path"] for f in inventory["files"]] == ["dirty_web.jsonl.gz"]
    assert data_version(result) == load_sources().get("dirty_web").provenance.checksum
    assert (tmp_path / "store" / "raw" / "dirty_web" / "_provenance.json").exists()


def test_unknown_license_fails_the_blocking_check_and_downstream_never_runs(tmp_path, write_registry):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.jsonl").write_text('{"text": "text of unknown origin"}\n')
    spec_fields = source_entry("dirty_web", str(tmp_path / "src" / "*.jsonl"), license="NOASSERTION")
    write_registry([spec_fields])
    spec_fields["provenance"]["checksum"] = source_inventory(load_sources().get("dirty_web"))["content_hash"]
    write_registry([spec_fields])

    result = materialize(tmp_path, dg.DagsterInstance.ephemeral(), "dirty_web")
    assert not result.success
    assert materialized(result) == ["raw_corpus"]  # the inventory exists, nothing downstream of it
    [check] = result.get_asset_check_evaluations()
    assert not check.passed
    assert check.description.startswith("not cleared: license 'NOASSERTION' is not in the allowlist [")
    [reason] = [r.data for r in check.metadata["reasons"].records]  # a table, not JSON
    assert reason["code"] == "license_not_allowed" and "license=NOASSERTION" in reason["details"]
    assert [r.data["problem"] for r in check.metadata["problems"].records] == [reason["message"]]
    inventory = json.loads((tmp_path / "store" / "raw" / "dirty_web" / "inventory.json").read_text())
    assert inventory["compliance"]["cleared"] is False


def test_raw_data_version_changes_exactly_when_a_source_file_changes(tmp_path, write_registry):
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.jsonl").write_text(f'{{"text": "{name}"}}\n')
    write_registry(
        [
            source_entry("dirty_web", str(tmp_path / "one")),
            source_entry("debian_licenses", str(tmp_path / "two")),
        ]
    )
    instance = dg.DagsterInstance.ephemeral()

    def versions() -> dict[str, str]:
        partitions = ("dirty_web", "debian_licenses")
        return {p: data_version(materialize(tmp_path, instance, p, [raw_corpus])) for p in partitions}

    first = versions()
    assert versions() == first  # nothing changed: same data versions
    (tmp_path / "one" / "a.jsonl").write_text('{"text": "one, edited"}\n')
    after_edit = versions()
    assert after_edit["dirty_web"] != first["dirty_web"]
    assert after_edit["debian_licenses"] == first["debian_licenses"]
    (tmp_path / "one" / "b.jsonl").write_text('{"text": "a new file"}\n')
    assert versions()["dirty_web"] not in (first["dirty_web"], after_edit["dirty_web"])


def _check_only(tmp_path, partition: str):
    job = dg.define_asset_job("compliance_only", selection=dg.AssetSelection.checks(compliance))
    defs = dg.Definitions(assets=[raw_corpus], asset_checks=[compliance], jobs=[job],
                          resources={"storage": StorageResource(root_uri=str(tmp_path / "store"))})
    result = defs.resolve_job_def("compliance_only").execute_in_process(tags={"dagster/partition": partition},
                                                                       raise_on_error=False)
    [check] = result.get_asset_check_evaluations()
    return check


def test_checksum_mismatch_and_missing_field_are_said_in_the_check_result(tmp_path, write_registry):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.jsonl").write_text('{"text": "hello"}\n')
    entry = source_entry("dirty_web", str(tmp_path / "src" / "*.jsonl"), checksum="f" * 64)
    entry["provenance"]["version"] = ""  # present but empty
    write_registry([entry])
    computed = source_inventory(load_sources().get("dirty_web"))["content_hash"]

    result = materialize(tmp_path, dg.DagsterInstance.ephemeral(), "dirty_web")
    [check] = result.get_asset_check_evaluations()
    assert not check.passed
    assert check.description == (
        f"not cleared: provenance.version is missing; checksum mismatch: provenance.checksum is {'f' * 64}, "
        f"the files hash to {computed} (if the change is intended, `marin sources checksum dirty_web` prints "
        "the value for sources.yaml)")
    reasons = {r.data["code"]: r.data for r in check.metadata["reasons"].records}
    assert reasons["missing_field"]["details"] == "fields=provenance.version"
    assert f"declared={'f' * 64}" in reasons["checksum_mismatch"]["details"]
    assert f"computed={computed}" in reasons["checksum_mismatch"]["details"]
    assert check.metadata["content_hash"].value == computed and check.metadata["declared_checksum"].value == "f" * 64


def test_check_cleaning_gate_and_training_gate_give_one_verdict(tmp_path, write_registry):
    """Cleared when raw_corpus ran; then the registry entry changes: all three refuse, for the same reason."""
    from marin_assets.core.storage import Storage
    from marin_assets.data.sources.compliance import SourcesNotClearedError, require_sources_cleared

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.jsonl").write_text('{"text": "hello"}\n')
    entry = source_entry("dirty_web", str(tmp_path / "src" / "*.jsonl"))
    write_registry([entry])
    entry["provenance"]["checksum"] = source_inventory(load_sources().get("dirty_web"))["content_hash"]
    write_registry([entry])
    assert materialize(tmp_path, dg.DagsterInstance.ephemeral(), "dirty_web").success
    storage = Storage(str(tmp_path / "store"))
    assert _check_only(tmp_path, "dirty_web").passed
    require_sources_cleared(storage, "cleaned_documents[dirty_web]", ["dirty_web"])
    require_sources_cleared(storage, "training_run[t]", ["dirty_web"])

    write_registry([{**entry, "license": "CC-BY-NC-4.0"}])
    reason = "license 'CC-BY-NC-4.0' is not in the allowlist"
    check = _check_only(tmp_path, "dirty_web")
    assert not check.passed and check.description.startswith(f"not cleared: {reason}")
    with pytest.raises(SourcesNotClearedError, match=f"dirty_web: {reason}"):
        require_sources_cleared(storage, "cleaned_documents[dirty_web]", ["dirty_web"])
    with pytest.raises(SourcesNotClearedError, match=f"dirty_web: {reason}"):
        require_sources_cleared(storage, "training_run[t]", ["dirty_web"])


def test_marin_sources_checksum_prints_what_clears_the_source(tmp_path, write_registry, capsys):
    from marin_assets.cli import main

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.jsonl").write_text('{"text": "hello"}\n')
    entry = source_entry("dirty_web", str(tmp_path / "src" / "*.jsonl"))
    write_registry([entry])
    assert main(["sources", "checksum", "dirty_web"]) == 0
    out, err = capsys.readouterr()
    printed = out.strip()
    assert printed == source_inventory(load_sources().get("dirty_web"))["content_hash"]
    assert "1 file(s), 18 bytes" in err and "sources.yaml has no checksum yet" in err
    entry["provenance"]["checksum"] = printed
    write_registry([entry])
    result = materialize(tmp_path, dg.DagsterInstance.ephemeral(), "dirty_web")
    assert result.success and result.get_asset_check_evaluations()[0].description == "cleared"
    with pytest.raises(SystemExit, match="unknown source 'nope'"):
        main(["sources", "checksum", "nope"])
