import hashlib

import numpy as np
import pytest

from marin_assets.scaling.parametric import FitError, ParametricLaw, fit_parametric
from marin_assets_tests.scaling.chinchilla import CSV, CSV_SHA256, PUBLISHED, chinchilla_points


@pytest.fixture(scope="module")
def points():
    assert hashlib.sha256(CSV.read_bytes()).hexdigest() == CSV_SHA256, "reference CSV was edited"
    table = chinchilla_points()
    assert len(table) == 240
    return table


@pytest.fixture(scope="module")
def mle_fit(points):
    return fit_parametric(points["N"], points["D"], points["loss"], method="mle")


def test_reproduces_besiroglu_approach3_within_1_percent(mle_fit):
    got = mle_fit.law.as_dict()
    for name, published in PUBLISHED.items():
        assert got[name] == pytest.approx(published, rel=0.01), (name, got[name], published)
    assert mle_fit.converged and mle_fit.n_points == 240


def test_plain_huber_is_hoffmanns_method_and_differs_on_B(points):
    fit = fit_parametric(points["N"], points["D"], points["loss"], method="huber")
    assert fit.law.A == pytest.approx(477.8, rel=0.01)
    assert fit.law.B == pytest.approx(2143, rel=0.01)
    assert abs(fit.law.B / PUBLISHED["B"] - 1) > 0.02  # why the likelihood variant is the default


def test_recovers_a_known_law_from_noisy_runs():
    true = ParametricLaw(E=1.7, A=400.0, B=1500.0, alpha=0.34, beta=0.30)
    rng = np.random.default_rng(1)
    N = np.exp(rng.uniform(np.log(1e7), np.log(1e10), 120))
    D = np.exp(rng.uniform(np.log(1e9), np.log(1e12), 120))
    L = true.loss(N, D) * np.exp(rng.normal(0, 0.003, N.size))
    fit = fit_parametric(N, D, L).law
    assert fit.alpha == pytest.approx(true.alpha, abs=0.03)
    assert fit.beta == pytest.approx(true.beta, abs=0.03)
    assert fit.E == pytest.approx(true.E, rel=0.03)
    assert fit.loss(3e10, 1e12) == pytest.approx(true.loss(3e10, 1e12), rel=0.005)


def test_compute_optimal_is_the_constrained_minimum():
    law = ParametricLaw(E=1.8, A=482.0, B=2085.0, alpha=0.348, beta=0.366)
    C = 1e22
    n_opt, d_opt = law.compute_optimal(C)
    assert 6 * n_opt * d_opt == pytest.approx(C)
    grid = n_opt * np.geomspace(0.5, 2.0, 201)
    losses = law.loss(grid, C / (6 * grid))
    assert grid[np.argmin(losses)] == pytest.approx(n_opt, rel=0.01)


@pytest.mark.parametrize(
    "N, D, L, match",
    [
        ([1e6] * 4, [1e8] * 4, [3.0] * 4, "at least 5 runs"),
        ([1e6] * 6, [1e8] * 6, [3.0, 3.1, np.nan, 3.2, 3.3, 3.4], "loss has 1 NaN"),
        ([1e6] * 6, [1e8] * 5, [3.0] * 6, "differ in length"),
        ([1e6, -1, 1e6, 1e6, 1e6, 1e6], [1e8] * 6, [3.0] * 6, "N has 1"),
    ],
)
def test_bad_input_is_an_error(N, D, L, match):
    with pytest.raises(FitError, match=match):
        fit_parametric(N, D, L)


def test_unknown_method():
    with pytest.raises(FitError, match="unknown method"):
        fit_parametric([1e6] * 6, [1e8] * 6, [3.0] * 6, method="lsq")
