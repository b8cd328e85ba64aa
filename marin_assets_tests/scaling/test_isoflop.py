import numpy as np
import pandas as pd
import pytest

from marin_assets.scaling.isoflop import fit_budget, fit_isoflop
from marin_assets.scaling.parametric import FitError
from marin_assets_tests.scaling.synthetic import TRUE_LAW, isoflop_points


@pytest.mark.parametrize("robust", [False, True])
def test_power_laws_match_the_true_allocation_exponents(robust):
    fit = fit_isoflop(isoflop_points(span=4.0), robust=robust)
    a_true = TRUE_LAW.beta / (TRUE_LAW.alpha + TRUE_LAW.beta)
    # A parabola in ln N only approximates the true curve, so a few percent, not exact.
    assert fit.N_law.exponent == pytest.approx(a_true, abs=0.02)
    assert fit.D_law.exponent == pytest.approx(1 - a_true, abs=0.02)
    lo, hi = fit.N_law.exponent_ci
    assert lo < fit.N_law.exponent < hi
    n_true, _ = TRUE_LAW.compute_optimal(1e21)
    assert fit.N_law(1e21) == pytest.approx(n_true, rel=0.1)
    assert all(b.usable for b in fit.budgets) and not fit.warnings


def test_robust_parabola_resists_one_bad_run():
    points = isoflop_points(budgets=(1e19,), per_budget=7, span=6.0)
    clean = fit_budget(1e19, points["N"], points["loss"])
    points.loc[1, "loss"] += 0.5  # one run with a broken eval
    plain = fit_budget(1e19, points["N"], points["loss"])
    robust = fit_budget(1e19, points["N"], points["loss"], robust=True)
    assert abs(np.log(robust.N_opt / clean.N_opt)) < abs(np.log(plain.N_opt / clean.N_opt))


def test_too_few_points_is_reported_and_excluded():
    points = isoflop_points()
    points = points[~((points["budget"] == 1e18) & (points.index % 7 > 1))]  # 2 runs left in 1e18
    fit = fit_isoflop(points)
    status = {b.budget: b.status for b in fit.budgets}
    assert status[1e18] == "too_few_points"
    assert any("1e+18" in w and "excluded" in w for w in fit.warnings)
    assert fit.N_law.n_budgets == 3


def test_unbracketed_minimum_is_reported_and_excluded():
    points = isoflop_points()
    edge = points["budget"] == 1e21
    n_opt, _ = TRUE_LAW.compute_optimal(1e21)
    points = points[~edge | (points["N"] < n_opt * 0.9)]  # only the small-model side of the minimum
    fit = fit_isoflop(points)
    bad = next(b for b in fit.budgets if b.budget == 1e21)
    assert bad.status == "not_bracketed" and "largest model" in bad.message
    assert fit.N_law.n_budgets == 3


def test_fewer_than_two_usable_budgets_is_an_error():
    points = isoflop_points(budgets=(1e19, 1e20))
    points = points[(points["budget"] == 1e19) | (points.index % 7 < 2)]
    with pytest.raises(FitError, match="needs >= 2 budgets"):
        fit_isoflop(points)


def test_two_budgets_fit_but_warn_that_there_is_no_interval():
    fit = fit_isoflop(isoflop_points(budgets=(1e19, 1e20)))
    assert np.isnan(fit.N_law.exponent_ci[0])
    assert any("no confidence interval" in w for w in fit.warnings)


def test_missing_columns():
    with pytest.raises(FitError, match="lack columns"):
        fit_isoflop(pd.DataFrame({"budget": [1.0], "N": [1.0]}))
