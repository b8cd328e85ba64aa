"""downstream_eval through Dagster: a trained run x a task set -> result.json and summary-first metadata;
a task set whose file changed is refused naming the file."""

import json

import dagster as dg
import pytest

from marin_assets.defs.evaluation.definitions import build_defs
from marin_assets.train.runs import TrainingRuns
from marin_assets_tests.evaluation.toy_task_set import toy_registry
from marin_assets_tests.evaluation.trained_run import RUN, SPEC
from marin_assets_tests.local_resources import local_resources

pytestmark = pytest.mark.slow


def materialize(root, registry):
    defs = build_defs(registry, TrainingRuns(runs={RUN: SPEC}))
    run_asset = dg.AssetSpec("training_run", partitions_def=dg.StaticPartitionsDefinition([RUN]))
    assets = [*defs.assets, run_asset]
    with dg.DagsterInstance.ephemeral() as instance:
        return dg.materialize(assets, partition_key=dg.MultiPartitionKey({"run": RUN, "task_set": "toy_pairs"}),
                              instance=instance, raise_on_error=False, resources=local_resources(str(root)),
                              selection=["downstream_eval"])


def test_a_run_is_evaluated_on_a_task_set_and_a_changed_file_is_refused(trained_run, tmp_path):
    root = trained_run.parent.parent
    registry = toy_registry(tmp_path / "pairs")
    result = materialize(root, registry)
    assert result.success
    metadata = result.get_asset_materialization_events()[0].materialization.metadata
    assert list(metadata)[:2] == ["accuracy_plot", "accuracy_plot (preview)"]  # plots first (record_output)
    keys = list(metadata)[2:]
    assert keys[0] == "acc" and keys.index("summary") < keys.index("result")
    assert "| **overall** |" in metadata["summary"].value and "chance 0.500" in metadata["summary"].value
    assert metadata["accuracy_plot"].value.startswith("![accuracy](data:image/png;base64,")
    saved = json.loads((root / "evaluation" / "training" / RUN / "toy_pairs" / "result.json").read_text())
    assert saved["overall"]["items"] == 48 and round(saved["overall"]["acc"], 4) == metadata["acc"].value
    assert saved["checkpoint_step"] == 39 and set(saved["categories"]) == {"order", "order_b"}

    changed = tmp_path / "pairs" / "word_order.jsonl"
    changed.write_text(changed.read_text() + "\n")
    failed = materialize(root, registry)
    assert not failed.success
    error = failed.get_step_failure_events()[0].event_specific_data.error.to_string()
    assert f"data file {changed} has sha256" in error
