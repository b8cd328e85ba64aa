"""Bootstrap confidence intervals for the parametric law: resample runs with replacement, refit.

A resample is a vector of per-run multiplicities (weights), so every refit sees the same arrays and
warm-starts from the full-data fit. Refits use the Huber objective by default, which is what
Besiroglu et al. do for their published intervals (their point estimate is the likelihood fit): it
converges in ~15 L-BFGS steps where the kinked likelihood needs ~150 BFGS steps, and it gives
their intervals on the Chinchilla points. Refits are spread over worker processes.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from marin_assets.scaling.parametric import PARAM_NAMES, FitError, ParametricFit, ParametricLaw, fit_parametric


@dataclass(frozen=True)
class BootstrapResult:
    samples: pd.DataFrame  # one row per resample: E, A, B, alpha, beta, converged
    n_requested: int
    n_failed: int
    level: float
    seed: int

    def intervals(self) -> dict[str, tuple[float, float]]:
        ok = self.samples[self.samples["converged"]]
        return {name: percentile_interval(ok[name].to_numpy(), self.level) for name in PARAM_NAMES}

    def laws(self) -> list[ParametricLaw]:
        ok = self.samples[self.samples["converged"]]
        return [ParametricLaw(**{k: float(row[k]) for k in PARAM_NAMES}) for _, row in ok.iterrows()]


def percentile_interval(values, level: float = 0.95) -> tuple[float, float]:
    values = np.asarray(values, float)
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return (float("nan"), float("nan"))
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(values, [tail, 100.0 - tail])
    return (float(lo), float(hi))


def resample_weights(n_points: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, n_points) multiplicities of a with-replacement resample of the runs."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_points, size=(n_boot, n_points))
    return np.stack([np.bincount(row, minlength=n_points) for row in draws]).astype(float)


def _refit_chunk(payload) -> list[dict]:
    N, D, L, point, method, weight_rows = payload
    rows = []
    for weights in weight_rows:
        try:
            fit = fit_parametric(N, D, L, method=method, delta=point.delta, weights=weights, init=point)
            rows.append({**fit.law.as_dict(), "converged": fit.converged})
        except FitError:
            rows.append({**{k: float("nan") for k in PARAM_NAMES}, "converged": False})
    return rows


def bootstrap_parametric(
    N, D, L, point: ParametricFit, *, n_boot: int = 1000, seed: int = 0, level: float = 0.95,
    workers: int | None = None, refit_method: str = "huber",
) -> BootstrapResult:
    """Refit on `n_boot` resamples of the runs, warm-started at `point` (same seed → same intervals)."""
    N, D, L = (np.asarray(v, float) for v in (N, D, L))
    weights = resample_weights(len(L), n_boot, seed)
    if workers is None:  # starting worker processes costs seconds; only worth it for many refits
        workers = 1 if n_boot < 300 else (os.cpu_count() or 1)
    workers = max(1, min(workers, n_boot))
    chunks = [(N, D, L, point, refit_method, part) for part in np.array_split(weights, workers)]
    if workers == 1:
        rows = _refit_chunk(chunks[0])
    else:
        # spawn, not fork: the caller (Dagster, JAX) may be multi-threaded.
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            rows = [row for part in pool.map(_refit_chunk, chunks) for row in part]
    samples = pd.DataFrame(rows, columns=[*PARAM_NAMES, "converged"])
    return BootstrapResult(samples, n_boot, int((~samples["converged"]).sum()), level, seed)


def prediction_intervals(laws: list[ParametricLaw], budgets, level: float = 0.95,
                         flops_per_param_token: float = 6.0) -> pd.DataFrame:
    """Per target budget: intervals of the compute-optimal N*, D* and loss across bootstrap laws."""
    rows = []
    for budget in np.asarray(budgets, float):
        n_opt, d_opt, loss = [], [], []
        for law in laws:
            n, d = law.compute_optimal(budget, flops_per_param_token)
            n_opt.append(n), d_opt.append(d), loss.append(law.loss(n, d))
        row = {"C": float(budget)}
        for name, values in (("N_opt", n_opt), ("D_opt", d_opt), ("loss", loss)):
            row[f"{name}_lo"], row[f"{name}_hi"] = percentile_interval(values, level)
        rows.append(row)
    return pd.DataFrame(rows)
