"""Dense vs MoE at equal training compute, and the MoE suite's effective parameter multiplier. Pure.

Both suites count N as active parameters except the input embedding, and C = 6 N D, so a MoE run
(N, D) and a dense run (N, D) cost the same compute. `compare` takes each suite's observation table
(run, budget, N, D, C, loss) and each suite's fitted law (`suite_law`):
- per budget, the best (lowest) loss of each suite, MoE minus dense, each law's compute-optimal loss,
  the multiplier fitted on that budget's MoE runs, and the effective compute multiplier (the compute
  the dense law needs, on its compute-optimal frontier, to reach the MoE suite's best loss / C);
- per MoE run, N_eff: the N at which the dense law, at the run's D, predicts the run's loss;
- the effective parameter multiplier k: the one factor for which the dense law at (k N, D) best
  predicts every MoE run's loss (Huber on log loss, as the fits), i.e. what a MoE parameter is worth
  in dense parameters at the same tokens and compute; with a bootstrap interval (dense runs and MoE
  runs resampled, the dense law refitted each time) when the dense fit has a bootstrap.
A fit that is missing, fails, or whose law does not depend on N gives no multiplier and says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from marin_assets.scaling.bootstrap import bootstrap_parametric, percentile_interval, resample_weights
from marin_assets.scaling.laws.base import FitError, Law, huber
from marin_assets.scaling.parametric import fit_parametric

N_RANGE = (1e0, 1e15)  # where N_eff is searched; outside it the loss is unreachable by the dense law
LOG_K_BOUND = math.log(1e3)  # |log k| searched; a fit at this bound means the dense law cannot match the runs
COMPUTE_RANGE = 1e4  # the effective compute multiplier is searched within C / 1e4 .. C x 1e4


@dataclass(frozen=True)
class SuiteLaw:
    """One suite's fitted law with its bootstrap laws, or the reason there is none."""

    suite: str
    law: Law | None
    problem: str | None = None
    bootstrap_laws: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def suite_law(suite: str, table: pd.DataFrame, fit, covariates: dict | None = None, bootstrap: int = 0) -> SuiteLaw:
    """Fit `fit.law` to a suite's runs with its own fit settings; degenerate fits are named, not used."""
    if len(table) == 0:
        return SuiteLaw(suite, None, f"{suite} has no trained runs to fit")
    try:
        point = fit_parametric(table["N"], table["D"], table["loss"], method=fit.method, delta=fit.delta, law=fit.law,
                               covariates=covariates)
    except FitError as exc:
        return SuiteLaw(suite, None, f"{suite}'s {fit.law} fit failed on {len(table)} runs: {exc}")
    N, D = table["N"].to_numpy(float), table["D"].to_numpy(float)
    gain = point.law.loss(N, D) - point.law.loss(2 * N, D)  # what doubling N buys at each run: must be > 0
    if not np.all(np.isfinite(gain)) or np.max(gain) <= 1e-9 * float(np.max(table["loss"])):
        return SuiteLaw(suite, None, f"{suite}'s {fit.law} fit is degenerate: its loss does not decrease with N at "
                                     f"the runs ({point.law.as_dict()}), so no size is equivalent to another")
    notes = [f"{suite}: {name} not identified ({why})" for name, why in point.unidentified.items()]
    if not point.converged:  # BFGS's "precision loss" at a kink of the objective; parametric_fit uses such fits too
        notes.append(f"{suite}: the {fit.method} optimiser stopped without its convergence criterion")
    laws = []
    if bootstrap:
        boot = bootstrap_parametric(N, D, table["loss"], point, n_boot=bootstrap, seed=fit.seed, level=fit.level,
                                    covariates=covariates)
        laws = boot.laws()
        if boot.n_failed:
            notes.append(f"{suite}: {boot.n_failed} of {bootstrap} bootstrap refits did not converge (left out)")
    return SuiteLaw(suite, point.law, None, laws, notes)


def dense_equivalent_n(law, loss: float, D: float) -> float | None:
    """The N whose dense-law loss at D equals `loss`; None when no N in N_RANGE reaches it."""
    lo, hi = math.log(N_RANGE[0]), math.log(N_RANGE[1])
    f = lambda log_n: float(law.loss(math.exp(log_n), D)) - loss  # decreasing in N
    if f(lo) < 0 or f(hi) > 0:
        return None
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return math.exp((lo + hi) / 2)


def fit_multiplier(law, N, D, loss, weights=None, delta: float = 1e-3) -> float | None:
    """k minimising sum w Huber(log loss - log law.loss(k N, D)); None when the best k is at the search bound."""
    from scipy.optimize import minimize_scalar

    N, D, log_l = (np.asarray(v, float) for v in (N, D, np.log(np.asarray(loss, float))))
    w = np.ones_like(log_l) if weights is None else np.asarray(weights, float)

    def objective(log_k):
        with np.errstate(invalid="ignore", divide="ignore"):
            pred = np.log(law.loss(np.exp(log_k) * N, D))
        return float(w @ huber(log_l - pred, delta)[0]) if np.all(np.isfinite(pred)) else math.inf

    grid = np.linspace(-LOG_K_BOUND, LOG_K_BOUND, 241)  # coarse scan first: Huber of a monotone residual
    values = np.array([objective(x) for x in grid])      # has flat stretches a local search can stall on
    best = int(np.argmin(values))
    if not np.isfinite(values[best]) or best in (0, len(grid) - 1):
        return None
    res = minimize_scalar(objective, bounds=(grid[best - 1], grid[best + 1]), method="bounded",
                          options={"xatol": 1e-8})
    return float(math.exp(res.x))


def multiplier_interval(laws: list, moe: pd.DataFrame, seed: int, level: float, delta: float) -> tuple | None:
    """Percentile interval of k over bootstrap laws of the dense suite, each with its own resample of MoE runs."""
    if not laws:
        return None
    weights = resample_weights(len(moe), len(laws), seed + 1)  # not the dense resamples' stream
    ks = [fit_multiplier(law, moe["N"], moe["D"], moe["loss"], w, delta) for law, w in zip(laws, weights)]
    ks = [k for k in ks if k is not None]
    return percentile_interval(ks, level) if ks else None


def compute_multiplier(law, loss: float, C: float) -> float | None:
    """C' / C where the dense law's compute-optimal loss at C' equals `loss`; None outside C x 1e+-4."""
    f = lambda log_c: float(law.loss(*law.compute_optimal(math.exp(log_c)))) - loss  # decreasing in C
    lo, hi = math.log(C / COMPUTE_RANGE), math.log(C * COMPUTE_RANGE)
    if f(lo) < 0 or f(hi) > 0:
        return None
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return math.exp((lo + hi) / 2) / C


def _optimal_loss(fitted: SuiteLaw | None, C: float) -> float | None:
    return float(fitted.law.loss(*fitted.law.compute_optimal(C))) if fitted and fitted.law else None


def compare(dense: pd.DataFrame, moe: pd.DataFrame, dense_law: SuiteLaw, moe_law: SuiteLaw | None = None,
            *, seed: int = 0, level: float = 0.95, delta: float = 1e-3) -> dict:
    law = dense_law.law
    budgets = []
    for budget in sorted(set(dense["budget"]) & set(moe["budget"])):
        d, m = dense[dense["budget"] == budget], moe[moe["budget"] == budget]
        best_d, best_m = d.loc[d["loss"].idxmin()], m.loc[m["loss"].idxmin()]
        budgets.append({
            "budget": float(budget), "dense_loss": float(best_d["loss"]), "dense_run": best_d["run"],
            "moe_loss": float(best_m["loss"]), "moe_run": best_m["run"],
            "moe_minus_dense": float(best_m["loss"] - best_d["loss"]),
            "dense_law_loss_opt": _optimal_loss(dense_law, budget), "moe_law_loss_opt": _optimal_loss(moe_law, budget),
            "multiplier": fit_multiplier(law, m["N"], m["D"], m["loss"], delta=delta) if law else None,
            "compute_multiplier": compute_multiplier(law, float(best_m["loss"]), float(budget)) if law else None})
    runs, unreachable = [], []
    for row in moe.itertuples() if law else ():
        n_eff = dense_equivalent_n(law, row.loss, row.D)
        if n_eff is None:
            unreachable.append(row.run)
            continue
        runs.append({"run": row.run, "budget": float(row.budget), "N_active": float(row.N), "D": float(row.D),
                     "loss": float(row.loss), "N_eff": n_eff, "multiplier": n_eff / row.N})
    k = fit_multiplier(law, moe["N"], moe["D"], moe["loss"], delta=delta) if law else None
    problem = dense_law.problem or (None if k is not None else
                                    f"the dense law at k N matches the MoE runs only at the search bound "
                                    f"(k = 1e+-{LOG_K_BOUND / math.log(10):.0f}): no finite multiplier fits them")
    interval = multiplier_interval(dense_law.bootstrap_laws, moe, seed, level, delta) if k is not None else None
    return {"budgets": budgets, "runs": runs, "effective_parameter_multiplier": k,
            "multiplier_interval": list(interval) if interval else None, "level": level,
            "multiplier_problem": problem if k is None else None, "unreachable": unreachable,
            "dense_law": law.as_dict() if law else None, "moe_law": moe_law.law.as_dict() if moe_law and moe_law.law else None,
            "moe_law_problem": moe_law.problem if moe_law else "not fitted",
            "notes": [*dense_law.notes, *(moe_law.notes if moe_law else [])]}
