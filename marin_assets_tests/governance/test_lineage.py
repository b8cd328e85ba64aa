"""record_output's lineage (partitioned inputs, URIs, licenses) and the audit walked from it, on real
Dagster materializations writing real files."""

import json

import dagster as dg
import pytest

from marin_assets.cli import main
from marin_assets.core import layout
from marin_assets.core.storage import MANIFEST_NAME, Storage
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.defs.governance.governance_assets import audit_report
from marin_assets.governance.audit import build_audit, render_audit_markdown
from marin_assets.data.sources.licenses import SourcesNotClearedError
from marin_assets_tests.governance.lineage_fixture import SOURCES, STAND_INS, materialize_chain, raw_corpus
from marin_assets_tests.local_resources import local_resources


def _real_problems(report: dict) -> list[str]:
    # A developer's working tree may be dirty; CI's is not. Everything else must be clean.
    return [p for p in report["problems"] if "dirty git tree" not in p]


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("storage"))
    instance = dg.DagsterInstance.ephemeral()
    materialize_chain(instance, root)
    return instance, Storage(root)


def test_manifests_name_partitioned_inputs_their_locations_and_licenses(chain):
    _, storage = chain
    mixture = storage.read_json(layout.MIXTURES, "sample", MANIFEST_NAME)
    assert set(mixture["inputs"]) == {f"raw_corpus[{s}]" for s in SOURCES}
    for source in SOURCES:
        label = f"raw_corpus[{source}]"
        assert mixture["input_uris"][label] == storage.uri(layout.RAW, source)
        raw = storage.read_json(layout.RAW, source, MANIFEST_NAME)
        assert mixture["inputs"][label] == raw["output_hash"]
        # raw_corpus records the verdict it is committing (read from its staged inventory).
        assert raw["data_use"][source]["cleared"] is True

    # mixture named no sources: it inherited them (and their verdicts) from its inputs.
    assert mixture["licenses"] == {s: load_sources().get(s).license for s in SOURCES}
    assert all(use["cleared"] is True for use in mixture["data_use"].values())

    run = storage.read_json(layout.TRAINING, "tiny", MANIFEST_NAME)
    assert run["inputs"] == {"mixture[sample]": mixture["output_hash"]}
    assert run["licenses"] == {s: load_sources().get(s).license for s in SOURCES}
    assert run["devices"] == ["cpu:0"]
    assert all(use["cleared"] is True for use in run["data_use"].values())
    assert run["environment"]["uv_lock_sha256"] not in ("", None)


def test_materialization_metadata_shows_licenses_and_data_use(chain):
    instance, _ = chain
    event = instance.get_latest_materialization_event(dg.AssetKey("training_run"))
    metadata = event.asset_materialization.metadata
    for source in SOURCES:
        assert f"{source}=" in metadata["licenses"].value
        assert f"{source}=" in metadata["data_use"].value
    assert "(cleared)" in metadata["data_use"].value
    assert metadata["input_data_versions"].value.startswith("mixture[sample]=")


def test_audit_walks_from_checkpoint_to_every_raw_source(chain):
    _, storage = chain
    report = build_audit(storage, "tiny", storage.uri(layout.TRAINING, "tiny"))
    labels = [n["label"] for n in report["nodes"]]
    assert labels[:2] == ["training_run[tiny]", "mixture[sample]"]
    assert sorted(labels[2:]) == sorted(f"raw_corpus[{s}]" for s in SOURCES)
    assert [n["depth"] for n in report["nodes"]] == [0, 1] + [2] * len(SOURCES)
    assert all(i["status"] == "verified" for n in report["nodes"] for i in n["inputs"])
    assert _real_problems(report) == []
    rows = {row["source"]: row for row in report["sources"]}
    assert set(rows) == set(SOURCES)
    assert rows["python_docs"]["license"] == "PSF-2.0" and rows["python_docs"]["terms"] == "permissive"
    assert rows["python_docs"]["inventory"]["content_hash"] == load_sources().get("python_docs").provenance.checksum
    assert rows["python_docs"]["inventory"]["file_count"] == 1

    markdown = render_audit_markdown(report)
    assert f"| python_docs | PSF-2.0 | permissive | yes | `{rows['python_docs']['inventory']['content_hash'][:12]}" in markdown
    assert "training_run[tiny]" in markdown and "mixture[sample]" in markdown


def test_uncleared_source_blocks_training_and_shows_in_the_audit(tmp_path):
    root = str(tmp_path)
    instance = dg.DagsterInstance.ephemeral()
    materialize_chain(instance, root)
    storage = Storage(root)
    resources = local_resources(root)
    # The dirty_web snapshot changes and is refused by compliance.
    dg.materialize(
        STAND_INS, selection=[raw_corpus], partition_key="dirty_web", instance=instance, resources=resources,
        run_config={"ops": {"raw_corpus": {"config": {"cleared": False, "snapshot": "v2"}}}},
    )
    with pytest.raises(SourcesNotClearedError, match="dirty_web: checksum mismatch: provenance.checksum is .*, the files hash to hash-dirty_web-v2"):
        dg.materialize(STAND_INS, selection=["training_run"], partition_key="tiny", instance=instance,
                       resources=resources)

    report = build_audit(storage, "tiny", storage.uri(layout.TRAINING, "tiny"))
    problems = _real_problems(report)
    assert "mixture[sample]: input raw_corpus[dirty_web] is changed since (re-materialized)" in problems
    assert any(p.startswith("source dirty_web is not cleared") for p in problems)
    assert {row["source"]: row["cleared"] for row in report["sources"]}["dirty_web"] is False


def test_audit_report_asset_writes_markdown_and_json(chain, capsys):
    instance, storage = chain
    result = dg.materialize(
        [*STAND_INS, audit_report], selection=[audit_report], instance=instance,
        resources=local_resources(storage.root_uri),
    )
    metadata = result.asset_materializations_for_node("audit_report")[0].metadata
    assert metadata["runs"].value == "tiny"
    assert "# Audit: training run `tiny`" in metadata["report"].value
    written = storage.read_json(layout.GOVERNANCE, "audit", "tiny.json")
    assert written["nodes"][0]["output_uri"] == storage.uri(layout.TRAINING, "tiny")
    assert storage.exists(layout.GOVERNANCE, "audit", "tiny.md")

    assert main(["audit", "tiny", "--storage-root", storage.root_uri, "--json", "--no-write"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["run"] == "tiny" and len(printed["nodes"]) == 2 + len(SOURCES)
    assert main(["audit", "never-ran", "--storage-root", storage.root_uri, "--no-write"]) == 1
