"""Profile before scaling: per-run estimates from measured profiles, the total, and the device-hours budget."""

import pytest

from marin_assets.scaling.suite import suite_runs
from marin_assets.scaling.suite_plan import SuiteBudgetExceeded, estimate_run, plan_suite, require_within_budget
from marin_assets_tests.scaling.suite_fixture import fixture_recipe


def profiles(recipe, step_s=0.01, startup=30.0, devices=1):
    return {size: {"median_step_s": step_s * (i + 1), "startup_compile_s": startup, "num_devices": devices}
            for i, size in enumerate(sorted(recipe.sizes))}


def test_run_estimate_is_startup_plus_steps_at_the_measured_pace():
    recipe = fixture_recipe()
    run = suite_runs(recipe)[0]
    est = estimate_run(run, {"median_step_s": 0.5, "startup_compile_s": 20.0, "num_devices": 8})
    assert est.wall_s == pytest.approx(20.0 + run.steps * 0.5)
    assert est.device_hours == pytest.approx(est.wall_s * 8 / 3600)


def test_plan_totals_every_run_and_refuses_above_the_budget_naming_the_largest():
    recipe = fixture_recipe()
    runs = suite_runs(recipe)
    plan = plan_suite(runs, profiles(recipe), max_device_hours=None)
    assert len(plan["runs"]) == len(runs) and plan["within_budget"]
    assert plan["total_device_hours"] == pytest.approx(sum(r["device_hours"] for r in plan["runs"]))
    hours = [r["device_hours"] for r in plan["runs"]]
    assert hours == sorted(hours, reverse=True)  # largest first
    tight = plan_suite(runs, profiles(recipe), max_device_hours=plan["total_device_hours"] / 2)
    assert not tight["within_budget"]
    assert plan["runs"][0]["run"] in tight["problem"] and "max_device_hours=" in tight["problem"]
    with pytest.raises(SuiteBudgetExceeded, match="largest runs: " + plan["runs"][0]["run"]):
        require_within_budget(tight)
    require_within_budget(plan_suite(runs, profiles(recipe), max_device_hours=plan["total_device_hours"] * 2))


def test_a_size_without_a_profile_is_named_not_guessed():
    recipe = fixture_recipe()
    partial = dict(list(profiles(recipe).items())[:2])
    with pytest.raises(ValueError, match="no profile for sizes"):
        plan_suite(suite_runs(recipe), partial, None)


def test_recipe_budget_must_be_positive():
    with pytest.raises(Exception, match="max_device_hours"):
        fixture_recipe(max_device_hours=0)
