"""A run initialised from another run's weights (real MaxText, Dagster): it starts where the parent ended.

The parent trains 61 steps from MaxText's random init; the child declares `init: {weights: parent}`
(a weights.yaml entry pinned to the parent's checkpoint hash). The child's eval after its first
step (warmup: learning rate ~0) must equal the parent's final eval loss, far below the parent's own
first eval (a fresh model). The child's manifest names the parent run as an input, so the audit
walks from the child to the parent and on to the parent's mixture and sources. The parent exported
to an HF folder and registered as `format: hf` weights starts a run at the same loss; the same folder
claiming another shape is refused naming the config.json field.
"""

import json
import shutil

import dagster as dg
import pytest
import yaml

from marin_assets.core.recipes import PACKAGE_RECIPES
from marin_assets.core.storage import Storage
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.governance.audit import build_audit
from marin_assets.train.checkpoint_model import CheckpointModel
from marin_assets.defs.train.definitions import build_defs
from marin_assets.train.hf_export import write_hf_folder
from marin_assets.train.runs import TrainingRuns
from marin_assets.train.weights import checkpoint_inventory, load_weights
from marin_assets_tests.local_resources import local_resources
from marin_assets_tests.train.mixture_fixture import build_mixture
from marin_assets_tests.train.test_training_e2e import BASELINES, TINY

pytestmark = pytest.mark.slow

CHILD = {**TINY, "budget": {"steps": 11}, "eval": {"interval": 10}, "init": {"weights": "parent"}}
RUNS = TrainingRuns(runs={"parent": TINY, "child": CHILD,
                          "child-uncleared": {**CHILD, "init": {"weights": "parent-uncleared"}},
                          "child-hf": {**CHILD, "init": {"weights": "parent-hf"}},
                          "child-hf-deeper": {**CHILD, "init": {"weights": "parent-hf-deeper"}}})


@pytest.fixture
def env(tmp_path, monkeypatch):
    recipes = tmp_path / "recipes"
    shutil.copytree(PACKAGE_RECIPES, recipes)
    (tmp_path / "sample_data").symlink_to(PACKAGE_RECIPES.parent / "sample_data")  # sources.yaml's ../sample_data
    monkeypatch.setenv("MARIN_RECIPES_DIR", str(recipes))
    monkeypatch.setenv("MARIN_DATA_ROOTS", str(PACKAGE_RECIPES.parent / "sample_data"))
    load_weights.cache_clear()
    load_sources.cache_clear()
    root = tmp_path / "storage"
    build_mixture(root)
    defs = build_defs(RUNS, baselines_dir=BASELINES)
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
    yield {"root": root, "recipes": recipes,
           "assets": [defs.get_assets_def("training_plan"), defs.get_assets_def("training_run"), mixture]}
    load_weights.cache_clear()
    load_sources.cache_clear()


def materialize(env, run):
    with dg.DagsterInstance.ephemeral() as instance:
        return dg.materialize(env["assets"], partition_key=run, raise_on_error=False, instance=instance,
                              resources=local_resources(str(env["root"])), selection=["training_plan", "training_run"])


def result_json(env, run):
    return json.loads((env["root"] / "training" / run / "final" / "result.json").read_text())


def register(env, checksum, hf_folders=()):
    provenance = {"origin": "training_run[parent] of this test", "version": "1", "checksum": checksum}
    entries = [{"name": "parent", "format": "run", "uri": "parent", "license": "MIT", "provenance": provenance},
               {"name": "parent-uncleared", "format": "run", "uri": "parent", "license": "LicenseRef-no-rights",
                "provenance": provenance}]
    entries += [{"name": name, "format": "hf", "uri": str(folder), "license": "MIT",
                 "provenance": {"origin": "the parent exported to HF by this test", "version": "1",
                                "checksum": checkpoint_inventory(str(folder))["content_hash"]}}
                for name, folder in hf_folders]
    (env["recipes"] / "weights.yaml").write_text(json.dumps({"weights": entries}))
    load_weights.cache_clear()


def _failure(result) -> str:
    assert not result.success
    return str(next(e for e in result.all_events if e.is_step_failure).event_specific_data.error)


def test_a_run_initialised_from_a_tiny_run_starts_at_its_final_eval_loss(env):
    assert materialize(env, "parent").success
    parent = result_json(env, "parent")
    register(env, "0" * 64)  # pinned to a checkpoint the parent does not have (it changed since)
    failure = _failure(materialize(env, "child"))
    assert "checksum mismatch" in failure and parent["checkpoint_hash"] in failure
    register(env, parent["checkpoint_hash"])

    failure = _failure(materialize(env, "child-uncleared"))
    assert "refusing to train from weights 'parent-uncleared'" in failure
    assert "license 'LicenseRef-no-rights' is not in the allowlist" in failure

    child_run = materialize(env, "child")
    assert child_run.success
    child = result_json(env, "child")
    fresh_start = parent["eval_curve"][0][1]          # the parent's eval after its first step
    child_start = child["eval_curve"][0][1]           # the child's eval after its first step
    print(f"parent: first eval {fresh_start:.4f}, final eval {parent['final_eval_loss']:.4f}; "
          f"child: first eval {child_start:.4f}")
    assert child_start == pytest.approx(parent["final_eval_loss"], abs=0.02)
    assert child_start < fresh_start - 0.5
    keys = json.loads((env["root"] / "training" / "child" / "plan" / "plan.json").read_text())["maxtext_keys"]
    assert keys["load_parameters_path"] == f"{parent['checkpoint_uri']}/items"

    manifest = json.loads((env["root"] / "training" / "child" / "final" / "_provenance.json").read_text())
    assert manifest["init_weights"]["parent_run"] == "parent"
    assert manifest["inputs"]["training_run[parent]"] == parent["checkpoint_hash"]
    storage = Storage(str(env["root"]))
    report = build_audit(storage, "child", str(env["root"] / "training" / "child" / "final"))
    labels = [node["label"] for node in report["nodes"]]
    assert labels[0] == "training_run[child]" and "training_run[parent]" in labels, labels

    check_hf_import(env, parent, env["root"].parent)



def export_to_hf(run_dir, folder):
    """The parent's final checkpoint in the HF layout (what hf_export writes)."""
    model = CheckpointModel.load(str(run_dir))
    keys = yaml.safe_load((run_dir / "maxtext.yml").read_text())
    folder.mkdir()
    write_hf_folder(str(folder), keys, model.params, keys["tokenizer_path"], model.tokenizer.bos_id,
                    model.tokenizer.eos_id)
    return folder


def check_hf_import(env, parent, tmp_path):
    """Export the parent to HF, import that folder as weights (format: hf), start a run from it."""
    folder = export_to_hf(env["root"] / "training" / "parent", tmp_path / "parent-hf")
    deeper = tmp_path / "parent-hf-deeper"  # the same folder claiming a third layer: not the run's model
    shutil.copytree(folder, deeper)
    config = json.loads((deeper / "config.json").read_text())
    (deeper / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 3}))
    register(env, parent["checkpoint_hash"], [("parent-hf", folder), ("parent-hf-deeper", deeper)])

    failure = _failure(materialize(env, "child-hf-deeper"))
    assert "refusing to train from weights 'parent-hf-deeper'" in failure, failure
    assert "num_hidden_layers is 3, model recipe 'tiny-0.2m' has 2 (architecture.num_layers)" in failure, failure

    assert materialize(env, "child-hf").success
    child = result_json(env, "child-hf")
    print(f"child from the HF export: first eval {child['eval_curve'][0][1]:.4f} "
          f"(parent final {parent['final_eval_loss']:.4f})")
    assert child["eval_curve"][0][1] == pytest.approx(parent["final_eval_loss"], abs=0.02)
    keys = json.loads((env["root"] / "training" / "child-hf" / "plan" / "plan.json").read_text())["maxtext_keys"]
    assert keys["load_parameters_path"].startswith(str(env["root"] / "weights" / "parent-hf"))
    manifest = json.loads((env["root"] / "training" / "child-hf" / "final" / "_provenance.json").read_text())
    assert manifest["init_weights"]["hf_folder"] == str(folder)
