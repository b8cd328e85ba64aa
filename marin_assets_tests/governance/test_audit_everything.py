"""Everything trained is audited (training, scaling and held-out runs), and the governance assets
themselves have a code version and a provenance manifest, like every computed asset."""

import dagster as dg
import pytest

from marin_assets.core import layout
from marin_assets.core.storage import MANIFEST_NAME, Storage
from marin_assets.defs.governance.governance_assets import audit_report, failure_catalog
from marin_assets.lineage.recording import record_output
from marin_assets.resources.storage_resource import StorageResource
from marin_assets_tests.governance.lineage_fixture import STAND_INS, materialize_chain, mixture
from marin_assets_tests.local_resources import local_resources


@dg.asset(partitions_def=dg.StaticPartitionsDefinition(["C1e15__n1"]),
          deps=[dg.AssetDep(mixture, partition_mapping=dg.StaticPartitionMapping({"sample": "C1e15__n1"}))])
def scaling_run(context: dg.AssetExecutionContext, storage: StorageResource):
    """Stand-in with the real key: writes a result through record_output as the scaling stage does."""
    with storage.storage.atomic_dir("scaling", "suite", "runs", context.partition_key) as staged:
        staged.write_json({"final_eval_loss": 3.0}, "result.json")
        return record_output(context, staged, recipe={"key": context.partition_key}, code_version="scale-1")


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("storage"))
    instance = dg.DagsterInstance.ephemeral()
    materialize_chain(instance, root)
    dg.materialize([*STAND_INS, scaling_run], selection=[scaling_run], partition_key="C1e15__n1", instance=instance,
                   resources=local_resources(root))
    return instance, Storage(root)


def test_audit_covers_scaling_runs_too_and_has_a_manifest(chain):
    instance, storage = chain
    result = dg.materialize([*STAND_INS, scaling_run, audit_report], selection=[audit_report], instance=instance,
                            resources=local_resources(storage.root_uri))
    metadata = result.asset_materializations_for_node("audit_report")[0].metadata
    assert metadata["runs"].value == "scaling_run__C1e15__n1, tiny"
    scaling = storage.read_json(layout.GOVERNANCE, "audit", "scaling_run__C1e15__n1.json")
    assert scaling["nodes"][0]["asset"] == "scaling_run"
    assert {n["asset"] for n in scaling["nodes"]} >= {"scaling_run", "mixture", "raw_corpus"}
    manifest = storage.read_json(layout.GOVERNANCE, "audit_index", MANIFEST_NAME)
    assert manifest["code_version"] == audit_report.code_versions_by_key[audit_report.key]
    assert "scaling_run[C1e15__n1]" in manifest["inputs"] and "training_run[tiny]" in manifest["inputs"]
    assert set(storage.read_json(layout.GOVERNANCE, "audit_index", "index.json")) == {"tiny", "scaling_run__C1e15__n1"}


def test_failure_catalog_has_a_manifest(tmp_path):
    result = dg.materialize([failure_catalog], instance=dg.DagsterInstance.ephemeral(),
                            resources=local_resources(str(tmp_path)))
    assert result.asset_materializations_for_node("failure_catalog")[0].metadata["failures"].value == 0
    manifest = Storage(str(tmp_path)).read_json(layout.GOVERNANCE, "failure_catalog_index", MANIFEST_NAME)
    assert manifest["code_version"] == failure_catalog.code_versions_by_key[failure_catalog.key]


def test_every_computed_asset_of_the_graph_has_a_code_version():
    from marin_assets.definitions import defs

    graph = defs.resolve_asset_graph()
    missing = [k.to_user_string() for k in graph.materializable_asset_keys if not graph.get(k).code_version]
    assert not missing, f"assets without a code version: {missing}"


def test_the_audit_lists_every_complete_checkpoint_of_the_run(tmp_path):
    """Intermediate checkpoints are audited too: each complete one under the run's checkpoint folder is listed
    (trained from the audited inputs); an incomplete one (no orbax marker) is not."""
    from marin_assets.core.checkpoint_folders import COMPLETE_MARKER
    from marin_assets.governance.audit import build_audit, render_audit_markdown

    storage = Storage(str(tmp_path))
    folder = tmp_path / "training" / "tiny" / "checkpoints"
    for step, complete in ((50, True), (100, True), (150, False)):
        (folder / str(step)).mkdir(parents=True)
        if complete:
            (folder / str(step) / COMPLETE_MARKER).write_text("{}")
    with storage.atomic_dir(layout.TRAINING, "tiny", "final") as staged:
        staged.write_json({"checkpoint_uri": f"{folder}/100", "final_eval_loss": 3.0}, "result.json")
        staged.write_json({"asset": "training_run", "partition": "tiny", "output_uri": staged.final_uri,
                           "output_hash": "h", "recipe_hash": "r", "code_version": "c", "inputs": {}}, MANIFEST_NAME)
    report = build_audit(storage, "tiny", storage.uri(layout.TRAINING, "tiny", "final"))
    assert report["checkpoints"] == [{"step": 50, "uri": f"{folder}/50", "final": False},
                                     {"step": 100, "uri": f"{folder}/100", "final": True}]
    assert f"| 50 | `{folder}/50` |  |" in render_audit_markdown(report)
