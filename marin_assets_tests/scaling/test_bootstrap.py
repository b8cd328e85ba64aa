import numpy as np
import pytest

from marin_assets.scaling.bootstrap import (
    bootstrap_parametric,
    percentile_interval,
    prediction_intervals,
    resample_weights,
)
from marin_assets.scaling.parametric import fit_parametric
from marin_assets_tests.scaling.synthetic import TRUE_LAW, isoflop_points


@pytest.fixture(scope="module")
def noisy():
    points = isoflop_points(noise=0.004, seed=3)
    fit = fit_parametric(points["N"], points["D"], points["loss"], top_k=5)
    return points, fit


def test_resamples_are_multiplicities_of_the_runs():
    w = resample_weights(10, 50, seed=0)
    assert w.shape == (50, 10) and (w.sum(axis=1) == 10).all()
    assert np.array_equal(w, resample_weights(10, 50, seed=0))
    assert not np.array_equal(w, resample_weights(10, 50, seed=1))


def test_intervals_cover_the_true_law_and_are_reproducible(noisy):
    points, fit = noisy
    result = bootstrap_parametric(points["N"], points["D"], points["loss"], fit, n_boot=60, seed=0, workers=1)
    assert result.n_failed == 0 and len(result.samples) == 60
    intervals = result.intervals()
    for name in ("alpha", "beta", "E"):
        lo, hi = intervals[name]
        assert lo <= getattr(TRUE_LAW, name) <= hi, (name, lo, hi)
        assert hi > lo
    again = bootstrap_parametric(points["N"], points["D"], points["loss"], fit, n_boot=60, seed=0, workers=2)
    for name, bounds in intervals.items():
        assert again.intervals()[name] == pytest.approx(bounds)

    table = prediction_intervals(result.laws(), [1e22, 1e23])
    n_true, _ = TRUE_LAW.compute_optimal(1e22)
    row = table.iloc[0]
    assert row["N_opt_lo"] < row["N_opt_hi"] and row["loss_lo"] < row["loss_hi"]
    assert row["loss_lo"] <= TRUE_LAW.loss(*TRUE_LAW.compute_optimal(1e22)) <= row["loss_hi"] * 1.01


def test_percentile_interval_ignores_nan():
    assert percentile_interval([1.0, np.nan, 3.0, 2.0], level=1.0) == (1.0, 3.0)
    assert np.isnan(percentile_interval([np.nan])[0])
