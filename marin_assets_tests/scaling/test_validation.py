"""Leave-one-budget-out validation, wide-interval warnings, Approach 2's loss law, and the
per-run repetition record (pure logic, synthetic suites from a known law)."""

import math

import pandas as pd
import pytest

from marin_assets.scaling import validation
from marin_assets.scaling.isoflop import fit_isoflop
from marin_assets.scaling.observations import collect_observations
from marin_assets.scaling.run_results import data_repetition
from marin_assets.tokenize.mixture_info import SourceInfo
from marin_assets_tests.scaling.synthetic import TRUE_LAW, isoflop_points


def test_approach2_loss_law_predicts_a_held_out_budget():
    fit = fit_isoflop(isoflop_points(budgets=(1e18, 1e19, 1e20), span=4.0))
    truth = TRUE_LAW.loss(*TRUE_LAW.compute_optimal(1e21))
    assert fit.loss_law.irreducible and fit.loss_law(1e21) == pytest.approx(truth, rel=1e-3)
    two = fit_isoflop(isoflop_points(budgets=(1e18, 1e19), span=4.0))
    assert not two.loss_law.irreducible and two.loss_law.E == 0.0
    assert any("no irreducible term" in w for w in two.warnings)


def test_leave_one_budget_out_errors_are_small_on_an_exact_law():
    points = isoflop_points(span=4.0)
    iso = validation.lobo_isoflop(points, robust=False)
    assert list(iso["budget"]) == [1e18, 1e19, 1e20, 1e21] and (iso["status"] == "ok").all()
    assert iso["loss_rel_error"].abs().max() < 0.01 and iso["N_opt_rel_error"].abs().max() < 0.15
    par = validation.lobo_parametric(points, law="chinchilla", method="huber", delta=1e-3, robust=False)
    assert par["runs_mean_abs_rel_error"].max() < 1e-3
    assert validation.largest_budget_problems(par, 0.01, 0.5) == []


def test_largest_budget_tolerance_warns():
    table = pd.DataFrame([{"budget": 1e18, "status": "ok", "loss_rel_error": 0.001, "N_opt_rel_error": 0.01},
                          {"budget": 1e19, "status": "ok", "loss_rel_error": -0.05, "N_opt_rel_error": 0.9}])
    problems = validation.largest_budget_problems(table, 0.02, 0.5)
    assert len(problems) == 2 and "-5.00% exceeds the tolerance 2.00%" in problems[0] and "N* error" in problems[1]
    assert validation.largest_budget_problems(table, 0.1, 1.0) == []
    assert "no budget could be held out" in validation.largest_budget_problems(pd.DataFrame(), 0.1, 1.0)[0]


def test_wide_bootstrap_intervals_are_flagged():
    warnings = validation.wide_intervals({"beta": (0.075, 1.97), "alpha": (0.3, 0.4), "E": (-0.1, 2.0)}, 10)
    assert len(warnings) == 2
    assert "beta: bootstrap interval 0.075..1.97 is 26.3x wide" in warnings[0] and "unbounded" in warnings[1]


def test_repetition_per_run_from_the_mixture():
    sources = {"a": SourceInfo(target_weight=0.5, realised_weight=0.75, epochs=30, train_tokens=750,
                               validation_tokens=10, available_train_tokens=25),
               "b": SourceInfo(target_weight=0.5, realised_weight=0.25, epochs=2.5, train_tokens=250,
                               validation_tokens=10, available_train_tokens=100)}
    rep = data_repetition(sources, 200)
    assert rep["unique_tokens"] == 25 + 50 and rep["epochs"] == pytest.approx(200 / 75)
    assert rep["source_epochs"] == {"a": 6.0, "b": 0.5}
    old = {"a": sources["a"].model_copy(update={"available_train_tokens": 0})}
    assert data_repetition(old, 200)["unique_tokens"] is None


def test_observations_carry_unique_tokens_and_any_metric():
    base = {"budget": 1.0, "size": "s", "N": 10, "D": 100, "C": 6000, "status": "succeeded"}
    results = [{**base, "run": "a", "final_eval_loss": 3.0, "unique_tokens": 50, "metrics": {"bpb": 1.2}},
               {**base, "run": "b", "final_eval_loss": 3.1}]
    obs = collect_observations(results, metric="bpb")
    assert list(obs.table["loss"]) == [1.2] and obs.table["U"].iloc[0] == 50
    assert [e.reason for e in obs.excluded] == ["bpb is None"]
    assert math.isnan(collect_observations(results).table.set_index("run").loc["b", "U"])
