"""Every registered law form: analytic Jacobian = numeric, compute-optimal = constrained minimum,
and the data-constrained form's repetition half-life recovered from repeated-data runs."""

import numpy as np
import pytest

from marin_assets.scaling.bootstrap import bootstrap_parametric
from marin_assets.scaling.laws import LAWS, get_form
from marin_assets.scaling.laws.base import FitError, numeric_jacobian
from marin_assets.scaling.laws.chinchilla import ParametricLaw
from marin_assets.scaling.laws.data_constrained import DataConstrainedLaw
from marin_assets.scaling.parametric import fit_parametric
from marin_assets.scaling.suite import FitSettings

TRUE = DataConstrainedLaw(E=1.7, A=400.0, B=1500.0, alpha=0.34, beta=0.30, R_star=8.0, unique_tokens=2e9)


def repeated_runs(n=90, noise=0.002, seed=0):
    """Runs on a 2e9-token pool, up to 60 epochs: enough repetition to pin down R*."""
    rng = np.random.default_rng(seed)
    N = np.exp(rng.uniform(np.log(1e7), np.log(3e9), n))
    D = np.exp(rng.uniform(np.log(5e8), np.log(1.2e11), n))
    U = np.minimum(D, TRUE.unique_tokens)
    return N, D, U, TRUE.loss(N, D) * np.exp(rng.normal(0, noise, n))


@pytest.mark.parametrize("name", sorted(LAWS))
def test_analytic_jacobian_matches_numeric(name):
    form = get_form(name)
    N, D, U, _ = repeated_runs(12)
    features = form.features(N, D, {"U": U})
    theta = form.to_theta(form.from_params({**TRUE.as_dict()}))
    _, jac = form.predict_log(theta, features)
    numeric = numeric_jacobian(lambda t, f: form.predict_log(t, f)[0], theta, features)
    assert jac == pytest.approx(numeric, rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("name", sorted(LAWS))
def test_compute_optimal_is_the_constrained_minimum(name):
    law = get_form(name).from_params(TRUE.as_dict())
    C = 1e21
    n_opt, d_opt = law.compute_optimal(C)
    assert 6 * n_opt * d_opt == pytest.approx(C)
    grid = n_opt * np.geomspace(0.5, 2.0, 401)
    assert grid[np.argmin(law.loss(grid, C / (6 * grid)))] == pytest.approx(n_opt, rel=0.01)


def test_without_repetition_the_data_constrained_law_is_chinchilla():
    free = DataConstrainedLaw(**{**TRUE.as_dict(), "unique_tokens": float("inf")})
    chin = ParametricLaw(1.7, 400.0, 1500.0, 0.34, 0.30)
    assert free.loss(1e9, 1e11) == pytest.approx(chin.loss(1e9, 1e11))
    assert free.compute_optimal(1e22)[0] == pytest.approx(chin.compute_optimal(1e22)[0], rel=1e-4)
    # With the pool, repeated tokens are worth less: higher loss, and the optimum moves to more parameters.
    assert TRUE.loss(1e9, 1e11) > chin.loss(1e9, 1e11)
    assert TRUE.compute_optimal(1e22)[0] > chin.compute_optimal(1e22)[0]


def test_data_constrained_fit_recovers_the_half_life_and_beats_chinchilla_on_aic():
    N, D, U, L = repeated_runs()
    fit = fit_parametric(N, D, L, law="data_constrained", covariates={"U": U}, top_k=5)
    assert fit.law.R_star == pytest.approx(TRUE.R_star, rel=0.25)
    assert fit.law.beta == pytest.approx(TRUE.beta, abs=0.03)
    assert fit.law.unique_tokens == pytest.approx(2e9)
    chinchilla = fit_parametric(N, D, L, law="chinchilla", top_k=5)
    assert fit.aic() < chinchilla.aic()
    boot = bootstrap_parametric(N, D, L, fit, n_boot=8, seed=0, covariates={"U": U})
    assert set(boot.intervals()) == set(get_form("data_constrained").param_names)
    assert all(isinstance(law, DataConstrainedLaw) and law.unique_tokens == fit.law.unique_tokens
               for law in boot.laws())


def test_data_constrained_needs_unique_tokens_and_unknown_forms_are_refused():
    N, D, U, L = repeated_runs(10)
    with pytest.raises(FitError, match="needs the unique tokens"):
        fit_parametric(N, D, L, law="data_constrained")
    with pytest.raises(FitError, match="exceeds D"):
        fit_parametric(N, D, L, law="data_constrained", covariates={"U": D * 2})
    with pytest.raises(FitError, match="unknown law form"):
        fit_parametric(N, D, L, law="kaplan")
    with pytest.raises(ValueError, match="not a registered law form"):
        FitSettings(law="kaplan")


def test_a_cold_fit_of_noiseless_points_reaches_the_law_and_not_just_the_default_gradient_tolerance():
    # The suite fixture's budgets with a short unique-token pool: the Huber loss is ~1e-6 at the
    # local optima BFGS's default gtol (1e-5) accepted (R* -> 4e7, 0.2-0.3% off in loss on one machine).
    from marin_assets_tests.scaling.suite_fixture import fixture_recipe
    from marin_assets.scaling.suite import suite_runs

    truth = DataConstrainedLaw(E=2.0, A=10.0, B=19.2, alpha=0.3, beta=0.3, R_star=3.0, unique_tokens=3e5)
    runs = list(suite_runs(fixture_recipe()))
    N, D = np.array([r.N for r in runs], float), np.array([r.D for r in runs], float)
    fit = fit_parametric(N, D, truth.loss(N, D), method="huber", law="data_constrained",
                         covariates={"U": np.minimum(D, truth.unique_tokens)})
    assert fit.converged and np.max(np.abs(fit.law.loss(N, D) / truth.loss(N, D) - 1)) < 1e-6
    assert fit.law.R_star == pytest.approx(3.0, rel=1e-4)


def test_data_constrained_fit_without_repetition_says_r_star_is_not_identifiable():
    """U = D for every run (or no counts): R* changes no loss, so it is reported as unidentified, not as
    its start value; no interval for it; no numerical warning escapes the fit."""
    import warnings

    from marin_assets.scaling import results
    from marin_assets.scaling.fit_settings import FitSettings
    from marin_assets.scaling.laws import law_from_params
    from marin_assets.scaling.observations import collect_observations
    from marin_assets_tests.scaling.synthetic import TRUE_LAW, isoflop_points

    points = isoflop_points(TRUE_LAW, budgets=(1e18, 1e19, 1e20), per_budget=5, noise=0.01)
    rows = [{**r, "final_eval_loss": r["loss"], "status": "succeeded", "vocab_size": 10**6, "unique_tokens": r["D"]}
            for r in points.to_dict("records")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit, _, report = results.parametric_report(collect_observations(rows),
                                                   FitSettings(law="data_constrained", bootstrap=10))
    assert report["R_star"] is None and "not identifiable" in report["unidentified"]["R_star"]
    assert "R_star" not in report["intervals"] and any(w.startswith("R_star: not identifiable") for w in report["warnings"])
    law = law_from_params(report, fit.context)  # predictions still work where R* plays no part
    assert np.isfinite(law.loss(1e8, 1e10))
    assert report["E"] is not None

    repeated = [{**r, "unique_tokens": r["D"] / (2 + i % 4)} for i, r in enumerate(rows)]
    fit, _, report = results.parametric_report(collect_observations(repeated),
                                               FitSettings(law="data_constrained", bootstrap=0))
    assert report["R_star"] is not None and report["unidentified"] == {}
