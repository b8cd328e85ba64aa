"""The protocol every scaling-law form implements, and what the generic fitter needs from it.

A form is fitted in log space: `predict_log(theta, features)` returns log L for every run and its
Jacobian d log L / d theta (analytic, or `numeric_jacobian` for a form that has none), so the
robust Huber / likelihood fitter in scaling/parametric.py, the bootstrap, the leave-one-budget-out
validation, the plots and the predictions work for every form alike. A fitted law is any object
with loss(N, D), compute_optimal(C) and as_dict().
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from marin_assets.core.registries import Registry

# Every module of this package is imported on the first lookup: a new law form is one new module.
LAWS = Registry("law form", package="marin_assets.scaling.laws")


def register(cls):
    """Class decorator: the form (one instance) is the recipe's `fit.law: <cls.name>`."""
    LAWS.register(cls.name)(cls())
    return cls


class FitError(ValueError):
    pass


class Law(Protocol):
    form: str

    def loss(self, N, D): ...

    def compute_optimal(self, C, flops_per_param_token: float = 6.0) -> tuple[np.ndarray, np.ndarray]: ...

    def as_dict(self) -> dict[str, float]: ...


class LawForm(Protocol):
    name: str
    param_names: tuple[str, ...]   # the fitted parameters, as stored in reports and bootstrap tables
    covariates: tuple[str, ...]    # per-run columns the form needs besides N and D (e.g. unique tokens U)

    def features(self, N: np.ndarray, D: np.ndarray, covariates: dict[str, np.ndarray]) -> tuple:
        """Validated per-run arrays that predict_log reads (computed once per fit)."""

    def context(self, N: np.ndarray, D: np.ndarray, covariates: dict[str, np.ndarray]) -> dict[str, float]:
        """Fixed (not fitted) quantities the law needs to predict, e.g. the unique-token pool."""

    def predict_log(self, theta: np.ndarray, features: tuple) -> tuple[np.ndarray, np.ndarray]:
        """log L per run and its (len(theta), n) Jacobian."""

    def starts(self, features: tuple, log_l, weights, delta: float, top_k: int,
               grid: np.ndarray | None = None) -> list[np.ndarray]:
        """Initial theta values for the multi-start Huber fit: the `top_k` best of `grid` (the fitter's
        `fit_parametric(grid=...)`; None: the form's own default grid)."""

    def unidentified(self, features: tuple) -> dict[str, str]:
        """Parameters these runs cannot determine (they do not change the predicted loss), each with why."""

    def to_law(self, theta: np.ndarray, context: dict[str, float]) -> Law: ...

    def to_theta(self, law: Law) -> np.ndarray: ...

    def from_params(self, params: dict, context: dict | None = None) -> Law: ...


def numeric_jacobian(predict, theta, features, step: float = 1e-6) -> np.ndarray:
    """Central differences of predict(theta, features) -> log L; for forms without an analytic Jacobian."""
    theta = np.asarray(theta, float)
    rows = []
    for i in range(len(theta)):
        h = step * max(1.0, abs(theta[i]))
        up, down = theta.copy(), theta.copy()
        up[i] += h
        down[i] -= h
        rows.append((predict(up, features) - predict(down, features)) / (2 * h))
    return np.array(rows)


def numeric_compute_optimal(law: Law, C, flops_per_param_token: float = 6.0, guess=None):
    """(N*, D*) minimising law.loss on the line k N D = C, by a bounded 1-D search in ln N per budget.

    `guess(C)` centres the search (a closed-form optimum of a related law); the bracket is e^+-8 around it.
    """
    from scipy.optimize import minimize_scalar

    budgets = np.atleast_1d(np.asarray(C, float))
    n_opt = np.empty_like(budgets)
    for i, budget in enumerate(budgets):
        scaled = budget / flops_per_param_token
        centre = np.log(guess(budget)) if guess is not None else 0.5 * np.log(scaled)
        res = minimize_scalar(lambda x, s=scaled: float(law.loss(np.exp(x), s / np.exp(x))),
                              bounds=(centre - 8.0, centre + 8.0), method="bounded", options={"xatol": 1e-7})
        n_opt[i] = np.exp(res.x)
    d_opt = budgets / (flops_per_param_token * n_opt)
    if np.ndim(C) == 0:
        return float(n_opt[0]), float(d_opt[0])
    return n_opt, d_opt


def positive(name: str, values) -> np.ndarray:
    values = np.asarray(values, float).ravel()
    bad = ~np.isfinite(values) | (values <= 0)
    if bad.any():
        raise FitError(f"{name} has {int(bad.sum())} non-finite or non-positive values; exclude those runs first")
    return values


def huber(x, delta):
    """Huber value and derivative psi; psi * (x - psi / 2) is 0.5 x^2 inside delta, delta(|x| - delta/2) outside."""
    psi = np.clip(x, -delta, delta)
    return psi * (x - 0.5 * psi), psi
