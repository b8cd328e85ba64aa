"""The data-constrained form (Muennighoff et al. 2023, "Scaling Data-Constrained Language Models").

    L(N, D) = E + A / N^alpha + B / D'^beta,   D' = U + U R* (1 - exp(-R / R*))

U is the number of unique tokens a run saw, R = D / U - 1 its repetitions (epochs beyond the first),
and R* the fitted repetition "half-life": repeated tokens are worth less and less, and D' saturates
at U (1 + R*) however long the run repeats its data. With R = 0 (no repetition) D' = D and the form
is the Chinchilla form.

Decision (documented here and in the recipe): only data repetition is modelled. The paper's excess
parameter term (N' from U_N, the compute-optimal size for U unique tokens, and a second half-life
R_N*) needs the law itself to define U_N and a 7th parameter; the CPU suite's ~13 runs on one
unique-token pool cannot identify it. A form with it would be one more file in this package.

theta = (a, b, e, alpha, beta, r) with R* = exp(r); the Jacobian is Chinchilla's with ln D' in place
of ln D, plus d log L / d r through D'. For predictions the law holds the unique-token pool of the
data (the largest U any run saw): a run of D tokens sees U = min(D, pool).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from marin_assets.scaling.laws.base import FitError, numeric_compute_optimal, positive, register
from marin_assets.scaling.laws.chinchilla import HOFFMANN_GRID, ParametricLaw, best_grid_points, predict_and_jacobian

R_STAR_STARTS = (1.0, 5.0, 15.0, 50.0, 200.0)  # Muennighoff et al. fit R_D* = 15.4


def effective_data(U, R, R_star):
    """D' = U (1 + R* (1 - e^(-R/R*))); exactly U where nothing repeats (R = 0), whatever R* is (even
    unknown: NaN when the fit could not identify it)."""
    with np.errstate(invalid="ignore"):
        return np.where(np.asarray(R) > 0, U * (1.0 + R_star * (1.0 - np.exp(-R / R_star))), U)


@dataclass(frozen=True)
class DataConstrainedLaw:
    E: float
    A: float
    B: float
    alpha: float
    beta: float
    R_star: float
    unique_tokens: float  # the pool; inf = unlimited data (then this is the Chinchilla law)
    form = "data_constrained"

    def effective_tokens(self, D):
        D = np.asarray(D, float)
        U = np.minimum(D, self.unique_tokens)
        return effective_data(U, D / U - 1.0, self.R_star)

    def loss(self, N, D):
        return self.E + self.A / np.asarray(N, float) ** self.alpha + self.B / self.effective_tokens(D) ** self.beta

    def compute_optimal(self, C, flops_per_param_token: float = 6.0):
        """Numeric: with repetition the optimum has no closed form (the unlimited-data optimum centres the search)."""
        free = ParametricLaw(self.E, self.A, self.B, self.alpha, self.beta)
        return numeric_compute_optimal(self, C, flops_per_param_token,
                                       guess=lambda c: free.compute_optimal(c, flops_per_param_token)[0])

    def as_dict(self) -> dict[str, float]:
        return {k: float(v) for k, v in asdict(self).items()}


@register
class DataConstrainedForm:
    name = "data_constrained"
    param_names = ("E", "A", "B", "alpha", "beta", "R_star")
    covariates = ("U",)

    def features(self, N, D, covariates):
        N, D = positive("N", N), positive("D", D)
        U = self._unique(D, covariates)
        return np.log(N), np.log(U), D / U - 1.0

    @staticmethod
    def _unique(D, covariates):
        """Per-run unique tokens; a run without a count (NaN) is taken as single-epoch (U = D)."""
        if "U" not in covariates:
            raise FitError("the data_constrained law needs the unique tokens U of every run (result.json "
                           "`unique_tokens`, or a `unique_tokens` column of an external table)")
        U = np.asarray(covariates["U"], float).ravel()
        U = np.where(np.isnan(U), D, U)
        bad = ~np.isfinite(U) | (U <= 0) | (U > D * (1 + 1e-9))
        if bad.any():
            raise FitError(f"U (unique tokens) is non-positive or exceeds D for {int(bad.sum())} runs")
        return np.minimum(U, D)

    def context(self, N, D, covariates):
        U = self._unique(positive("D", D), covariates)
        return {"unique_tokens": float(U.max()) if np.any(U < D) else float("inf")}

    def predict_log(self, theta, features):
        log_n, log_u, R = features
        R_star = np.exp(theta[5])
        decay = np.exp(-R / R_star)
        growth = 1.0 + R_star * (1.0 - decay)
        pred, jac5 = predict_and_jacobian(theta, log_n, log_u + np.log(growth))
        jac = np.empty((6, len(log_n)))
        jac[:5] = jac5
        # d ln D' / d r = R* (dg/dR*) / g with dg/dR* = (1 - e^{-x}) - x e^{-x}, x = R / R*.
        x = R / R_star
        jac[5] = jac5[1] * (-theta[4]) * R_star * ((1.0 - decay) - x * decay) / growth
        return pred, jac

    def starts(self, features, log_l, weights, delta, top_k, grid=None):
        log_n, log_u, R = features
        grid = HOFFMANN_GRID if grid is None else np.asarray(grid, float)
        candidates, scores = [], []
        for R_star in R_STAR_STARTS:
            log_d = log_u + np.log(1.0 + R_star * (1.0 - np.exp(-R / R_star)))
            points, score = best_grid_points(grid, log_n, log_d, log_l, weights, delta, top_k)
            candidates += [np.append(p, np.log(R_star)) for p in points]
            scores += list(score)
        return [candidates[i] for i in np.argsort(scores)[:top_k]]

    def unidentified(self, features):
        _, _, R = features
        if np.all(R <= 1e-9):
            return {"R_star": "not identifiable: no run repeats data (U = D for every run, or no unique-token "
                              "counts), so R* does not change any predicted loss; train runs that repeat data"}
        return {}

    def to_law(self, theta, context):
        a, b, e, alpha, beta, r = (float(v) for v in theta)
        return DataConstrainedLaw(E=float(np.exp(e)), A=float(np.exp(a)), B=float(np.exp(b)), alpha=alpha, beta=beta,
                                  R_star=float(np.exp(r)), unique_tokens=context.get("unique_tokens", float("inf")))

    def to_theta(self, law):
        return np.array([np.log(law.A), np.log(law.B), np.log(law.E), law.alpha, law.beta, np.log(law.R_star)])

    def from_params(self, params, context=None):
        pool = {**(context or {}), **params}.get("unique_tokens", float("inf"))
        # An unidentified R* is stored as None: NaN here, so a prediction that repeats data is NaN, not a guess.
        values = {k: float("nan") if params[k] is None else float(params[k]) for k in self.param_names}
        return DataConstrainedLaw(**values, unique_tokens=float(pool))
