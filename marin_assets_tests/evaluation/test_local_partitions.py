"""Which evaluations `marin materialize-all` runs by itself: task sets marked auto_evaluate whose data is here."""

import os

from marin_assets.defs.evaluation.downstream_eval_assets import local_partitions
from marin_assets.evaluation.task_sets import load_task_sets


def test_the_full_blimp_is_evaluated_on_demand_only_and_the_sample_always():
    registry = load_task_sets()
    assert local_partitions(registry, None, None) == ["blimp_sample"]
    keys = local_partitions(registry, ["a", "b"], ["a"])
    assert [(k.keys_by_dimension["run"], k.keys_by_dimension["task_set"]) for k in keys] == [("a", "blimp_sample")]


def test_an_auto_evaluated_set_whose_data_is_here_is_included(tmp_path):
    registry = load_task_sets()
    full = registry.get("blimp").model_copy(update={"auto_evaluate": True, "data_dir": str(tmp_path)})
    missing = full.model_copy(update={"name": "gone", "data_dir": os.path.join(str(tmp_path), "absent")})
    registry = registry.model_copy(update={"task_sets": [registry.get("blimp_sample"), full, missing]})
    assert local_partitions(registry, None, None) == ["blimp_sample", "blimp"]
