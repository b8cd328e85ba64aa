"""The Chinchilla form (Hoffmann et al. 2022): L(N, D) = E + A/N^alpha + B/D^beta.

theta = (a, b, e, alpha, beta) with A, B, E = exp(a, b, e); log L = lse(a - alpha ln N,
b - beta ln D, e), whose Jacobian is the softmax weights of the three terms (written out term by
term: it runs ~40 times per bootstrap refit). Starts: Hoffmann et al.'s grid of 4500 points, of
which the `top_k` best by Huber objective are optimised.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import product

import numpy as np

from marin_assets.scaling.laws.base import huber, positive, register

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
    form = "chinchilla"

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


def predict_and_jacobian(theta, log_n, log_d):
    """log L predicted by lse(a - alpha log N, b - beta log D, e), and its (5, n) Jacobian."""
    a, b, e, alpha, beta = theta[:5]
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


def grid_scores(grid, log_n, log_d, log_l, weights, delta):
    """Huber objective at every grid point at once (to pick the starts worth optimising)."""
    from scipy.special import logsumexp

    a, b, e, alpha, beta = (col[:, None] for col in grid.T)
    terms = np.broadcast_arrays(a - alpha * log_n, b - beta * log_d, e + 0 * log_n)
    value, _ = huber(log_l - logsumexp(np.stack(terms), axis=0), delta)
    return value @ weights


def best_grid_points(grid, log_n, log_d, log_l, weights, delta, top_k):
    with np.errstate(over="ignore", invalid="ignore"):
        scores = grid_scores(grid, log_n, log_d, log_l, weights, delta)
    order = np.argsort(np.nan_to_num(scores, nan=np.inf))[:top_k]
    return grid[order], np.nan_to_num(scores, nan=np.inf)[order]


@register
class ChinchillaForm:
    name = "chinchilla"
    param_names = ("E", "A", "B", "alpha", "beta")
    covariates: tuple[str, ...] = ()

    def features(self, N, D, covariates):
        return np.log(positive("N", N)), np.log(positive("D", D))

    def context(self, N, D, covariates):
        return {}

    def predict_log(self, theta, features):
        return predict_and_jacobian(theta, *features)

    def starts(self, features, log_l, weights, delta, top_k, grid=None):
        grid = HOFFMANN_GRID if grid is None else np.asarray(grid, float)
        return list(best_grid_points(grid, *features, log_l, weights, delta, top_k)[0])

    def unidentified(self, features):
        return {}  # every parameter shapes the loss of any set of runs spanning N and D

    def to_law(self, theta, context):
        a, b, e, alpha, beta = (float(v) for v in theta)
        return ParametricLaw(E=float(np.exp(e)), A=float(np.exp(a)), B=float(np.exp(b)), alpha=alpha, beta=beta)

    def to_theta(self, law):
        return np.array([np.log(law.A), np.log(law.B), np.log(law.E), law.alpha, law.beta])

    def from_params(self, params, context=None):
        return ParametricLaw(**{k: float(params[k]) for k in self.param_names})
