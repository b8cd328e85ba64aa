"""Approach 3: fit a registered law form (scaling/laws; default Chinchilla's L = E + A/N^alpha + B/D^beta)
to every run at once.

The fit works in log space on the form's parameters theta (for Chinchilla log L = lse(a - alpha log N,
b - beta log D, e) with A, B, E = exp(a, b, e)), and residuals are scored robustly. Two objectives:

- "huber" (Hoffmann et al. 2022): sum of Huber(delta) of the log-space residuals, minimised from the
  form's starts (a grid of initialisations). We use BFGS, as Besiroglu et al.'s code does: scipy's
  L-BFGS-B stops at the kinks of this objective (bootstrap refits from a warm start did not move at all).
- "mle" (Besiroglu et al. 2024, the default): maximum likelihood under a Huber-shaped density with
  a learned scale sigma, i.e. -sum log p((log L - pred) / exp(sigma)); minimised by BFGS started from
  the best Huber fit. This reproduces their published coefficients on the Chinchilla points.

Pure numpy/scipy; each form supplies its Jacobian so a 1000-sample bootstrap stays cheap. scipy is
imported by the functions that use it, so loading the code location does not pay for it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import numpy as np

from marin_assets.scaling.laws import get_form
from marin_assets.scaling.fit_inputs import validated_parametric_points
from marin_assets.scaling.laws.base import FitError, Law, huber
from marin_assets.scaling.laws.chinchilla import HOFFMANN_GRID, ParametricLaw

PARAM_NAMES = ("E", "A", "B", "alpha", "beta")  # the Chinchilla form's; other forms: get_form(name).param_names
METHODS = ("mle", "huber")
DEFAULT_GTOL, HUBER_GTOL = 1e-5, 1e-8  # scipy BFGS's default gradient tolerance; the cold Huber fits' (_fit_logs)
__all__ = ["FitError", "HOFFMANN_GRID", "ParametricLaw", "ParametricFit", "fit_parametric", "refit_resamples"]


@dataclass(frozen=True)
class ParametricFit:
    law: Law
    method: str
    delta: float
    objective: float
    log_scale: float | None  # MLE only: log of the fitted residual scale
    n_points: int
    converged: bool
    starts: int
    # BFGS's inverse-Hessian estimate of the Huber objective at its optimum (a by-product of the grid
    # search): bootstrap refits start from it as well as from the law, so they need ~10 steps, not ~35.
    huber_curvature: np.ndarray | None = field(default=None, compare=False, repr=False)
    form: str = "chinchilla"
    context: dict = field(default_factory=dict, compare=False)  # fixed quantities of the law (e.g. U pool)
    # parameter -> why the runs cannot determine it (its value is a start, not a fit): reported as None
    unidentified: dict = field(default_factory=dict, compare=False)

    @property
    def n_params(self) -> int:
        return len(get_form(self.form).param_names) + (self.log_scale is not None)

    def aic(self) -> float | None:
        """2k + 2 NLL, for the likelihood fit only (the Huber objective is not a likelihood)."""
        return 2 * self.n_params + 2 * self.objective if self.method == "mle" else None

    def parameters(self) -> dict:
        """The law's parameters as reported: an unidentified one is None, never a value that looks fitted."""
        return {**self.law.as_dict(), **{name: None for name in self.unidentified}}

    def as_dict(self) -> dict:
        out = {k: v for k, v in asdict(self).items()
               if k not in ("law", "huber_curvature", "form", "context", "unidentified")}
        return {**self.parameters(), **out, "law": self.form, "aic": self.aic(),
                "unidentified": dict(self.unidentified)}


def _huber_log_normaliser(delta: float) -> float:
    from scipy.special import ndtr

    return float(np.log(np.sqrt(2 * np.pi) * (1 - 2 * ndtr(-delta)) + 2 * np.exp(-0.5 * delta**2) / delta))


def _huber_objective(theta, predict, features, log_l, weights, delta):
    pred, jac = predict(theta, features)
    value, psi = huber(log_l - pred, delta)
    return float(weights @ value), -(jac @ (weights * psi))


def _mle_objective(params, predict, features, log_l, weights, delta, log_norm):
    theta, log_scale = params[:-1], params[-1]
    pred, jac = predict(theta, features)
    scale = np.exp(log_scale)
    x = (log_l - pred) / scale
    value, psi = huber(x, delta)
    total = weights.sum()
    grad = np.empty(len(params))
    grad[:-1] = -(jac @ (weights * psi)) / scale
    grad[-1] = -float(weights @ (psi * x)) + total
    return float(weights @ value) + total * (log_norm + log_scale), grad


def _validate(N, D, L, form):
    return validated_parametric_points(N, D, L, min_points=len(form.param_names))


def _prepare(N, D, L, law, covariates):
    form = get_form(law)
    N, D, L = _validate(N, D, L, form)
    covariates = {k: np.asarray(v, float) for k, v in (covariates or {}).items()}
    return form, form.features(N, D, covariates), np.log(L), form.context(N, D, covariates)


def fit_parametric(
    N, D, L, *, method: str = "mle", delta: float = 1e-3, grid: np.ndarray | None = None,
    top_k: int = 20, weights=None, init: ParametricFit | None = None, law: str = "chinchilla",
    covariates: dict | None = None,
) -> ParametricFit:
    """Fit the form `law`; `weights` are per-run multiplicities (a bootstrap resample), `init` a warm start.

    `covariates` holds the per-run columns the form needs (form.covariates, e.g. U). Without `init`,
    BFGS runs from the form's `top_k` best starts (for Chinchilla the best of Hoffmann's 4500-point
    grid by Huber objective; running all 4500 gives the same optimum on the Chinchilla points, as do the best 5).
    """
    if method not in METHODS:
        raise FitError(f"unknown method {method!r}; use one of {METHODS}")
    form, features, log_l, context = _prepare(N, D, L, law, covariates)
    w = np.ones_like(log_l) if weights is None else np.asarray(weights, float)
    fit = _fit_logs(form, (features, log_l, w, delta), context, method, grid, top_k, init)
    return replace(fit, unidentified=form.unidentified(features))


def refit_resamples(N, D, L, point: ParametricFit, weight_rows, method: str = "huber",
                    covariates: dict | None = None) -> np.ndarray:
    """Refit once per row of `weight_rows` (bootstrap multiplicities), each warm-started at `point`.

    Returns one row per resample: the form's parameters, then converged (1.0/0.0); NaNs where the
    refit failed. Validation and logs are done once for all rows; this is the bootstrap's worker
    function, kept here so worker processes import only numpy and scipy.
    """
    form, features, log_l, context = _prepare(N, D, L, point.form, covariates)
    rows = np.full((len(weight_rows), len(form.param_names) + 1), np.nan)
    for i, weights in enumerate(np.asarray(weight_rows, float)):
        try:
            fit = _fit_logs(form, (features, log_l, weights, point.delta), context, method, None, 0, point)
        except FitError:
            rows[i, -1] = 0.0
            continue
        rows[i] = [*(getattr(fit.law, name) for name in form.param_names), float(fit.converged)]
    return rows


def _fit_logs(form, args, context, method, grid, top_k, init) -> ParametricFit:
    from scipy.optimize import minimize

    features, log_l, weights, delta = args
    objective_args = (form.predict_log, *args)
    if init is not None and method == "mle" and init.log_scale is not None:
        # Warm start (bootstrap refits): straight to the likelihood, as Besiroglu et al. do.
        return _fit_mle(form, form.to_theta(init.law), init.log_scale, objective_args, context, starts=1)
    options = {}
    if init is not None:
        starts = [form.to_theta(init.law)]
        if init.huber_curvature is not None:
            options["hess_inv0"] = init.huber_curvature
    else:
        starts = form.starts(features, log_l, weights, delta, top_k, grid)
        # The mean Huber loss of log residuals is ~1e-6 near a good fit, so BFGS's default gtol (1e-5) can
        # stop a start short of the optimum (noiseless data: a fit 0.3% off in loss); cold starts go further.
        options["gtol"] = HUBER_GTOL
    best = None
    for start in starts:
        with np.errstate(over="ignore", invalid="ignore"):
            res = minimize(_huber_objective, start, args=objective_args, jac=True, method="BFGS", options=options)
        if "gtol" in options:  # converged: BFGS says so, or the default tolerance is met (the tighter
            # gtol may end in "precision loss" past the point the default would have accepted)
            res.success = bool(res.success or np.max(np.abs(res.jac)) < DEFAULT_GTOL)
        if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        raise FitError("every Huber start diverged")
    curvature = _positive_definite(best.hess_inv) if init is None else None
    if method == "huber":
        return ParametricFit(form.to_law(best.x, context), method, delta, float(best.fun), None, len(log_l),
                             bool(best.success), len(starts), curvature, form.name, context)
    return _fit_mle(form, best.x, 0.0, objective_args, context, starts=len(starts), curvature=curvature)


def _positive_definite(matrix) -> np.ndarray | None:
    """The symmetric part of BFGS's inverse-Hessian estimate, if it is positive definite (else None)."""
    sym = (np.asarray(matrix, float) + np.asarray(matrix, float).T) / 2
    return sym if np.all(np.isfinite(sym)) and np.linalg.eigvalsh(sym)[0] > 0 else None


def _fit_mle(form, theta0, log_scale0, objective_args, context, starts, curvature=None) -> ParametricFit:
    """BFGS on the likelihood (L-BFGS-B stalls on this kinked objective)."""
    from scipy.optimize import minimize

    delta, weights = objective_args[-1], objective_args[-2]
    log_norm = _huber_log_normaliser(delta)
    with np.errstate(over="ignore", invalid="ignore"):
        res = minimize(_mle_objective, np.append(theta0, log_scale0), args=(*objective_args, log_norm), jac=True,
                       method="BFGS")
    if not np.all(np.isfinite(res.x)):
        raise FitError("maximum-likelihood refinement diverged")
    # "Precision loss" is BFGS's normal exit at a kink; accept it if the gradient of the law is small.
    converged = bool(res.success or np.max(np.abs(res.jac[:-1])) < 1e-2 * max(1.0, abs(res.fun)))
    return ParametricFit(form.to_law(res.x[:-1], context), "mle", delta, float(res.fun), float(res.x[-1]),
                         int(round(float(weights.sum()))), converged, starts, curvature, form.name, context)
