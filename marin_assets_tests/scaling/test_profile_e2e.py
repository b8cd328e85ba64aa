"""Profile before scaling, for real: scaling_profile trains a few MaxText steps of a size on CPU;
scaling_plan estimates the suite from it and refuses a budget it exceeds; scaling_run then refuses to train."""

import json

import dagster as dg
import pytest

from marin_assets.defs.scaling.definitions import build_defs
from marin_assets.scaling.suite import suite_runs
from marin_assets_tests.local_resources import local_resources
from marin_assets_tests.scaling.suite_fixture import fixture_recipe
from marin_assets_tests.train.mixture_fixture import build_mixture

pytestmark = pytest.mark.slow


def test_profile_feeds_the_plan_and_the_budget_refuses(tmp_path):
    build_mixture(tmp_path, train_docs=600)
    recipe = fixture_recipe(budgets=[{"flops": 1e10, "sizes": ["d16l1"]}, {"flops": 3e10, "sizes": ["d16l1"]}],
                            heldout=None, profile_steps=4, max_device_hours=1e-6)
    defs = build_defs(recipe)
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
    assets, resources = [*defs.assets, mixture], local_resources(str(tmp_path))
    profiled = dg.materialize(assets, selection=["scaling_profile"], partition_key="d16l1", resources=resources)
    assert profiled.success
    profile = json.loads((tmp_path / "scaling" / recipe.name / "profiles" / "d16l1" / "profile.json").read_text())
    print("profile:", json.dumps(profile))
    assert len(profile["step_seconds"]) == 4 and 0 < profile["median_step_s"] < 5
    assert profile["startup_compile_s"] > 0 and profile["peak_memory_bytes"] > 0

    planned = dg.materialize(assets, selection=["scaling_plan"], resources=resources, raise_on_error=False)
    assert not planned.success  # 1e-6 device-hours: far below any real suite
    plan = json.loads((tmp_path / "scaling" / recipe.name / "plan" / "plan.json").read_text())
    runs = suite_runs(recipe)
    assert len(plan["runs"]) == 2 and plan["total_device_hours"] > 1e-6 and not plan["within_budget"]
    largest = max(runs, key=lambda r: r.steps).key
    assert plan["runs"][0]["run"] == largest and largest in plan["problem"]
    failure = next(e for e in planned.all_events if e.event_type_value == "STEP_FAILURE")
    assert "max_device_hours=1e-06" in str(failure.event_specific_data.error)

    trained = dg.materialize(assets, selection=["scaling_run"], partition_key=runs[0].key, resources=resources,
                             raise_on_error=False)
    assert not trained.success
    failure = next(e for e in trained.all_events if e.event_type_value == "STEP_FAILURE")
    assert "largest runs" in str(failure.event_specific_data.error)
    assert not (tmp_path / "training" / f"{recipe.name}-{runs[0].key}").exists()  # nothing trained
