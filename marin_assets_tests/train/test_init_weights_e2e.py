"""A run initialised from another run's weights (real MaxText, Dagster): it starts where the parent ended.

The parent trains 61 steps from MaxText's random init; the child declares `init: {weights: parent}`
(a weights.yaml entry pinned to the parent's checkpoint hash). The child's eval after its first
step (warmup: learning rate ~0) must equal the parent's final eval loss, far below the parent's own
first eval (a fresh model). The child's manifest names the parent run as an input, so the audit
walks from the child to the parent and on to the parent's mixture and sources.
"""

import json
import shutil

import dagster as dg
import pytest

from marin_assets.core.recipes import PACKAGE_RECIPES
from marin_assets.core.storage import Storage
from marin_assets.data.sources import load_sources
from marin_assets.governance.audit import build_audit
from marin_assets.train.definitions import build_defs
from marin_assets.train.runs import TrainingRuns
from marin_assets.train.weights import load_weights
from marin_assets_tests.local_resources import local_resources
from marin_assets_tests.train.mixture_fixture import build_mixture
from marin_assets_tests.train.test_training_e2e import BASELINES, TINY

pytestmark = pytest.mark.slow

CHILD = {**TINY, "budget": {"steps": 11}, "eval": {"interval": 10}, "init": {"weights": "parent"}}
RUNS = TrainingRuns(runs={"parent": TINY, "child": CHILD,
                          "child-uncleared": {**CHILD, "init": {"weights": "parent-uncleared"}}})


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


def register(env, checksum):
    provenance = {"origin": "training_run[parent] of this test", "version": "1", "checksum": checksum}
    entries = [{"name": "parent", "format": "run", "uri": "parent", "license": "MIT", "provenance": provenance},
               {"name": "parent-uncleared", "format": "run", "uri": "parent", "license": "LicenseRef-no-rights",
                "provenance": provenance}]
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

