"""Approach 3: fit L(N, D) = E + A/N^alpha + B/D^beta to every run at once.

The fit works in log space: log L is predicted by lse(a - alpha log N, b - beta log D, e) with
A, B, E = exp(a, b, e), and residuals are scored robustly. Two objectives:

- "huber" (Hoffmann et al. 2022): sum of Huber(delta) of the log-space residuals, minimised from a
  grid of initialisations. We use BFGS, as Besiroglu et al.'s code does: scipy's L-BFGS-B stops at
  the kinks of this objective (bootstrap refits from a warm start did not move at all).
- "mle" (Besiroglu et al. 2024, the default): maximum likelihood under a Huber-shaped density with
  a learned scale sigma, i.e. -sum log p((log L - pred) / exp(sigma)); minimised by BFGS started from
  the best Huber fit. This reproduces their published coefficients on the Chinchilla points.

Pure numpy/scipy; the gradients are analytic so a 1000-sample bootstrap stays cheap. scipy is
imported by the functions that use it, so loading the code location does not pay for it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from itertools import product

import numpy as np

from marin_assets.scaling.fit_inputs import FitError, validated_parametric_points

PARAM_NAMES = ("E", "A", "B", "alpha", "beta")
METHODS = ("mle", "huber")

# Hoffmann et al.'s initialisation grid over (a, b, e, alpha, beta): 6 x 6 x 5 x 5 x 5 = 4500 starts.
HOFFMANN_GRID = np.array(
    [
        [a, b, e, alpha, beta]
        for alpha, beta, e, a, b in product(
            np.arange(0, 2.5, 0.5), np.arange(0, 2.5, 0.5), np.arange(-1, 1.5, 0.5),
            np.arange(0, 30, 5), np.arange(0, 30, 5),
        )
    ]
)


@dataclass(frozen=True)
class ParametricLaw:
    E: float
    A: float
    B: float
    alpha: float
    beta: float

    def loss(self, N, D):
        return self.E + self.A / np.asarray(N, float) ** self.alpha + self.B / np.asarray(D, float) ** self.beta

    def compute_optimal(self, C, flops_per_param_token: float = 6.0):
        """(N*, D*) minimising L subject to flops_per_param_token * N * D = C (closed form)."""
        G = (self.alpha * self.A / (self.beta * self.B)) ** (1.0 / (self.alpha + self.beta))
        a = self.beta / (self.alpha + self.beta)
        scaled = np.asarray(C, float) / flops_per_param_token
        return G * scaled**a, scaled ** (1.0 - a) / G

    def as_dict(self) -> dict[str, float]:
        return {k: float(v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class ParametricFit:
    law: ParametricLaw
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

    def as_dict(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if k not in ("law", "huber_curvature")}
        return {**self.law.as_dict(), **out}


def _theta_to_law(theta) -> ParametricLaw:
    a, b, e, alpha, beta = (float(v) for v in theta)
    return ParametricLaw(E=float(np.exp(e)), A=float(np.exp(a)), B=float(np.exp(b)), alpha=alpha, beta=beta)


def _law_to_theta(law: ParametricLaw) -> np.ndarray:
    return np.array([np.log(law.A), np.log(law.B), np.log(law.E), law.alpha, law.beta])


def _predict_and_jacobian(theta, log_n, log_d):
    """log L predicted by lse(a - alpha log N, b - beta log D, e), and its (5, n) Jacobian.

    Written out term by term (no stacking): it runs ~40 times per bootstrap refit.
    """
    a, b, e, alpha, beta = theta
    model_term = a - alpha * log_n
    data_term = b - beta * log_d
    top = np.maximum(np.maximum(model_term, data_term), e)
    jac = np.empty((5, len(log_n)))
    np.exp(model_term - top, out=jac[0])
    np.exp(data_term - top, out=jac[1])
    np.exp(e - top, out=jac[2])
    total = jac[0] + jac[1] + jac[2]
    pred = top + np.log(total)
    jac[:3] /= total  # softmax weights: d pred / d (a, b, e)
    np.multiply(jac[0], -log_n, out=jac[3])
    np.multiply(jac[1], -log_d, out=jac[4])
    return pred, jac


def _huber(x, delta):
    """Huber value and derivative psi; psi * (x - psi / 2) is 0.5 x^2 inside delta, delta(|x| - delta/2) outside."""
    psi = np.clip(x, -delta, delta)
    return psi * (x - 0.5 * psi), psi


def _huber_objective(theta, log_n, log_d, log_l, weights, delta):
    pred, jac = _predict_and_jacobian(theta, log_n, log_d)
    value, psi = _huber(log_l - pred, delta)
    return float(weights @ value), -(jac @ (weights * psi))


def _huber_log_normaliser(delta: float) -> float:
    from scipy.special import ndtr

    return float(np.log(np.sqrt(2 * np.pi) * (1 - 2 * ndtr(-delta)) + 2 * np.exp(-0.5 * delta**2) / delta))


def _mle_objective(params, log_n, log_d, log_l, weights, delta, log_norm):
    theta, log_scale = params[:5], params[5]
    pred, jac = _predict_and_jacobian(theta, log_n, log_d)
    scale = np.exp(log_scale)
    x = (log_l - pred) / scale
    value, psi = _huber(x, delta)
    total = weights.sum()
    grad = np.empty(6)
    grad[:5] = -(jac @ (weights * psi)) / scale
    grad[5] = -float(weights @ (psi * x)) + total
    return float(weights @ value) + total * (log_norm + log_scale), grad


def _grid_objective(grid, log_n, log_d, log_l, weights, delta):
    """Huber objective at every grid point at once (to pick the starts worth optimising)."""
    from scipy.special import logsumexp

    a, b, e, alpha, beta = (col[:, None] for col in grid.T)
    terms = np.broadcast_arrays(a - alpha * log_n, b - beta * log_d, e + 0 * log_n)
    value, _ = _huber(log_l - logsumexp(np.stack(terms), axis=0), delta)
    return value @ weights


def _validate(N, D, L):
    return validated_parametric_points(N, D, L, min_points=5)


def fit_parametric(
    N, D, L, *, method: str = "mle", delta: float = 1e-3, grid: np.ndarray | None = None,
    top_k: int = 20, weights=None, init: ParametricFit | None = None,
) -> ParametricFit:
    """Fit the law; `weights` are per-run multiplicities (a bootstrap resample), `init` a warm start.

    Without `init`, the Huber objective is evaluated on the whole grid and BFGS is run from the
    `top_k` best grid points (running all 4500 gives the same optimum on the Chinchilla points, as do the best 5).
    """
    if method not in METHODS:
        raise FitError(f"unknown method {method!r}; use one of {METHODS}")
    log_n, log_d, log_l = _log_points(N, D, L)
    w = np.ones_like(log_l) if weights is None else np.asarray(weights, float)
    return _fit_logs((log_n, log_d, log_l, w, delta), method, grid, top_k, init)


def refit_resamples(N, D, L, point: ParametricFit, weight_rows, method: str = "huber") -> np.ndarray:
    """Refit once per row of `weight_rows` (bootstrap multiplicities), each warm-started at `point`.

    Returns one row per resample: E, A, B, alpha, beta, converged (1.0/0.0); NaNs where the refit
    failed. Validation and logs are done once for all rows; this is the bootstrap's worker function,
    kept here so worker processes import only numpy and scipy.
    """
    log_n, log_d, log_l = _log_points(N, D, L)
    rows = np.full((len(weight_rows), len(PARAM_NAMES) + 1), np.nan)
    for i, weights in enumerate(np.asarray(weight_rows, float)):
        try:
            fit = _fit_logs((log_n, log_d, log_l, weights, point.delta), method, None, 0, point)
        except FitError:
            rows[i, -1] = 0.0
            continue
        rows[i] = [*(getattr(fit.law, name) for name in PARAM_NAMES), float(fit.converged)]
    return rows


def _log_points(N, D, L):
    N, D, L = _validate(N, D, L)
    return np.log(N), np.log(D), np.log(L)


def _fit_logs(args, method, grid, top_k, init) -> ParametricFit:
    from scipy.optimize import minimize

    log_l, delta = args[2], args[4]
    if init is not None and method == "mle" and init.log_scale is not None:
        # Warm start (bootstrap refits): straight to the likelihood, as Besiroglu et al. do.
        return _fit_mle(_law_to_theta(init.law), init.log_scale, args, delta, starts=1)
    options = {}
    if init is not None:
        starts = [_law_to_theta(init.law)]
        if init.huber_curvature is not None:
            options["hess_inv0"] = init.huber_curvature
    else:
        grid = HOFFMANN_GRID if grid is None else np.asarray(grid, float)
        with np.errstate(over="ignore", invalid="ignore"):
            scores = _grid_objective(grid, *args)
        starts = list(grid[np.argsort(np.nan_to_num(scores, nan=np.inf))[:top_k]])
    best = None
    for start in starts:
        res = minimize(_huber_objective, start, args=args, jac=True, method="BFGS", options=options)
        if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        raise FitError("every Huber start diverged")
    curvature = _positive_definite(best.hess_inv) if init is None else None
    if method == "huber":
        return ParametricFit(_theta_to_law(best.x), method, delta, float(best.fun), None, len(log_l),
                             bool(best.success), len(starts), curvature)
    return _fit_mle(best.x, 0.0, args, delta, starts=len(starts), curvature=curvature)


def _positive_definite(matrix) -> np.ndarray | None:
    """The symmetric part of BFGS's inverse-Hessian estimate, if it is positive definite (else None)."""
    sym = (np.asarray(matrix, float) + np.asarray(matrix, float).T) / 2
    return sym if np.all(np.isfinite(sym)) and np.linalg.eigvalsh(sym)[0] > 0 else None


def _fit_mle(theta0, log_scale0, args, delta, starts, curvature=None) -> ParametricFit:
    """BFGS on the likelihood (L-BFGS-B stalls on this kinked objective)."""
    from scipy.optimize import minimize

    log_norm = _huber_log_normaliser(delta)
    res = minimize(_mle_objective, np.append(theta0, log_scale0), args=(*args, log_norm), jac=True, method="BFGS")
    if not np.all(np.isfinite(res.x)):
        raise FitError("maximum-likelihood refinement diverged")
    # "Precision loss" is BFGS's normal exit at a kink; accept it if the gradient of the law is small.
    converged = bool(res.success or np.max(np.abs(res.jac[:5])) < 1e-2 * max(1.0, abs(res.fun)))
    return ParametricFit(_theta_to_law(res.x[:5]), "mle", delta, float(res.fun), float(res.x[5]),
                         int(round(float(args[3].sum()))), converged, starts, curvature)
