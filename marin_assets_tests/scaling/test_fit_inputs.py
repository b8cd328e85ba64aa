"""Bad fitter input is a FitError that names the problem; numpy scalar losses are accepted."""

import numpy as np
import pandas as pd
import pytest

from marin_assets.scaling.fit_inputs import FitError
from marin_assets.scaling.isoflop import fit_budget, fit_isoflop
from marin_assets.scaling.observations import collect_observations
from marin_assets.scaling.parametric import fit_parametric
from marin_assets_tests.scaling.chinchilla import chinchilla_points
from marin_assets_tests.scaling.synthetic import isoflop_points


def _with(points: pd.DataFrame, row: int, column: str, value) -> pd.DataFrame:
    points = points.copy()
    points.loc[row, column] = value
    return points


@pytest.mark.parametrize("column, value, match", [
    ("loss", np.nan, r"loss has 1 NaN \(budget=1e\+18 N="),
    ("loss", np.inf, "loss has 1 infinite"),
    ("N", 0.0, r"N has 1 <= 0 \(budget=1e\+18 N=0\)"),
    ("N", -5e6, "N has 1 <= 0"),
])
def test_isoflop_bad_values_are_named_not_mislabelled(column, value, match):
    with pytest.raises(FitError, match=match):
        fit_isoflop(_with(isoflop_points(), 2, column, value))


def test_isoflop_duplicate_rows_and_a_single_budget_are_errors():
    points = isoflop_points()
    with pytest.raises(FitError, match=r"2 duplicate rows .* appears 2 times; the same run was counted more"):
        fit_isoflop(pd.concat([points, points.iloc[[3]]], ignore_index=True))
    with pytest.raises(FitError, match=r"needs >= 2 compute budgets, got 1 \(1e\+19\)"):
        fit_isoflop(isoflop_points(budgets=(1e19,)))


def test_fit_budget_refuses_nan_instead_of_calling_it_not_bracketed():
    points = isoflop_points(budgets=(1e19,))
    loss = points["loss"].to_numpy().copy()
    loss[0] = np.nan
    with pytest.raises(FitError, match="loss has 1 NaN"):
        fit_budget(1e19, points["N"], loss)


def test_isoflop_accepts_float32_losses():
    points = isoflop_points()
    as_f32 = points.assign(loss=[np.float32(v) for v in points["loss"]])
    fit = fit_isoflop(as_f32)
    assert fit.N_law.exponent == pytest.approx(fit_isoflop(points).N_law.exponent, rel=1e-4)


def test_parametric_duplicates_inf_and_float32():
    points = chinchilla_points()
    N, D, L = points["N"].to_numpy(), points["D"].to_numpy(), points["loss"].to_numpy()
    with pytest.raises(FitError, match=r"duplicate rows over \['N', 'D', 'loss'\]"):
        fit_parametric(np.append(N, N[0]), np.append(D, D[0]), np.append(L, L[0]), top_k=1)
    with pytest.raises(FitError, match=r"D has 1 infinite \(N="):
        fit_parametric(N, np.where(np.arange(len(D)) == 4, np.inf, D), L, top_k=1)
    with pytest.raises(FitError, match="loss holds a value that is not a number"):
        fit_parametric(N[:6], D[:6], ["3.1", "x", 3, 3, 3, 3])
    f32 = fit_parametric(N, D, [np.float32(v) for v in L], top_k=2)
    assert f32.law.alpha == pytest.approx(fit_parametric(N, D, L, top_k=2).law.alpha, rel=1e-3)


def test_observations_keep_numpy_scalar_losses():
    results = [{"run": "a", "budget": 6e11, "size": "a", "N": np.int64(100_000), "D": 1e6, "C": 6e11,
                "final_eval_loss": np.float32(3.25), "status": "succeeded"}]
    obs = collect_observations(results, max_loss=8.0)
    assert obs.excluded == [] and obs.table["loss"].item() == pytest.approx(3.25)
