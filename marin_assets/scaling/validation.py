"""How much to trust a fit: leave-one-budget-out refits (both approaches), wide bootstrap intervals,
and the comparison of registered law forms on the same runs (AIC and held-out error).

Leave-one-budget-out (as Delphi reports it): for each budget with a bracketed isoFLOP minimum, refit
without that budget's runs and predict its compute-optimal N* and loss; the "observed" optimum is
the budget's own parabola vertex, the same truth for both approaches, so their errors compare.
Approach 3 also reports the mean |relative error| of its loss at the left-out runs themselves.
The largest budget's row is the one that matters most: predicting it is an extrapolation.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from marin_assets.scaling.isoflop import fit_budget, fit_isoflop
from marin_assets.scaling.laws import FitError, get_form
from marin_assets.scaling.parametric import fit_parametric


def covariates_of(table: pd.DataFrame, law: str) -> dict[str, np.ndarray]:
    return {name: table[name].to_numpy(float) for name in get_form(law).covariates if name in table}


def _relative(predicted, observed) -> float:
    return float((predicted - observed) / observed) if observed and math.isfinite(observed) else math.nan


def _row(budget, observed, n_pred, loss_pred, held_out: int, **extra) -> dict:
    return {"budget": float(budget), "held_out_runs": held_out, "N_opt_observed": observed.N_opt if observed else math.nan,
            "N_opt_predicted": float(n_pred), "N_opt_rel_error": _relative(n_pred, observed.N_opt) if observed else math.nan,
            "loss_observed": observed.loss_opt if observed else math.nan, "loss_predicted": float(loss_pred),
            "loss_rel_error": _relative(loss_pred, observed.loss_opt) if observed else math.nan, **extra}


def row_weights(points: pd.DataFrame):
    """How many identical exported rows each row stands for (external duplicates: weight); None: one each."""
    return points["weight"].to_numpy(float) if "weight" in points.columns else None


def _vertex(points: pd.DataFrame, budget: float, robust: bool, k: float):
    runs = points[points["budget"] == budget]
    fit = fit_budget(float(budget), runs["N"], runs["loss"], robust=robust, flops_per_param_token=k,
                     weights=row_weights(runs))
    return fit if fit.usable else None


def lobo_isoflop(points: pd.DataFrame, *, robust: bool, flops_per_param_token: float = 6.0) -> pd.DataFrame:
    rows = []
    for budget in sorted(points["budget"].unique()):
        observed = _vertex(points, budget, robust, flops_per_param_token)
        if observed is None:
            continue  # no trustworthy minimum to compare with
        rest = points[points["budget"] != budget]
        try:
            fit = fit_isoflop(rest, robust=robust, flops_per_param_token=flops_per_param_token)
        except FitError as exc:
            rows.append({"budget": float(budget), "status": f"refit failed: {exc}"})
            continue
        rows.append(_row(budget, observed, fit.N_law(budget), fit.loss_law(budget), int((points["budget"] == budget).sum()),
                         status="ok"))
    return pd.DataFrame(rows)


def lobo_parametric(points: pd.DataFrame, *, law: str, method: str, delta: float, robust: bool,
                    flops_per_param_token: float = 6.0, top_k: int = 5) -> pd.DataFrame:
    rows = []
    for budget in sorted(points["budget"].unique()):
        held = points["budget"] == budget
        rest = points[~held]
        try:
            fit = fit_parametric(rest["N"], rest["D"], rest["loss"], method=method, delta=delta, law=law,
                                 covariates=covariates_of(rest, law), top_k=top_k, weights=row_weights(rest))
        except FitError as exc:
            rows.append({"budget": float(budget), "status": f"refit failed: {exc}"})
            continue
        n_pred, d_pred = fit.law.compute_optimal(float(budget), flops_per_param_token)
        runs = points[held]
        runs_error = float(np.mean(np.abs(fit.law.loss(runs["N"], runs["D"]) / runs["loss"] - 1)))
        # the refit's parameters travel with its row, so the predictions can show the spread of the refits
        rows.append(_row(budget, _vertex(points, budget, robust, flops_per_param_token), n_pred,
                         fit.law.loss(n_pred, d_pred), int(held.sum()), runs_mean_abs_rel_error=runs_error, status="ok",
                         **{f"{REFIT_PREFIX}{k}": v for k, v in fit.law.as_dict().items()}))
    return pd.DataFrame(rows)


REFIT_PREFIX = "refit_"


def lobo_params(rows: list[dict]) -> list[dict]:
    """The parameters of each successful leave-one-budget-out refit, from the report's rows."""
    return [{k[len(REFIT_PREFIX):]: v for k, v in row.items() if k.startswith(REFIT_PREFIX)}
            for row in rows if row.get("status") == "ok" and any(k.startswith(REFIT_PREFIX) for k in row)]


def largest_budget_problems(table: pd.DataFrame, loss_tolerance: float, n_opt_tolerance: float) -> list[str]:
    """Warnings when the prediction of the largest held-out budget misses by more than the tolerances."""
    if table.empty:
        return ["leave-one-budget-out: no budget could be held out (needs bracketed minima in >= 3 budgets)"]
    last = table.sort_values("budget").iloc[-1]
    if last.get("status") != "ok":
        return [f"leave-one-budget-out at C={last['budget']:.3g}: {last['status']}"]
    problems = []
    loss_error = last["loss_rel_error"]
    if not math.isfinite(loss_error):  # no bracketed minimum there: judge the runs themselves (Approach 3)
        loss_error = last.get("runs_mean_abs_rel_error", math.nan)
    if not math.isfinite(loss_error) or abs(loss_error) > loss_tolerance:
        problems.append(f"leave-one-budget-out at the largest budget C={last['budget']:.3g}: loss error "
                        f"{loss_error:+.2%} exceeds the tolerance {loss_tolerance:.2%}")
    n_error = last["N_opt_rel_error"]
    if math.isfinite(n_error) and abs(n_error) > n_opt_tolerance:
        problems.append(f"leave-one-budget-out at the largest budget C={last['budget']:.3g}: N* error "
                        f"{n_error:+.1%} exceeds the tolerance {n_opt_tolerance:.0%}")
    return problems


def wide_intervals(intervals: dict[str, tuple[float, float]], factor: float) -> list[str]:
    """A positive parameter's interval hi/lo above `factor` (or reaching 0): the fit does not pin it down."""
    warnings = []
    for name, (lo, hi) in intervals.items():
        if not (math.isfinite(lo) and math.isfinite(hi)):
            warnings.append(f"{name}: bootstrap interval is undefined ({lo}, {hi})")
        elif lo <= 0 or hi / lo > factor:
            ratio = "unbounded" if lo <= 0 else f"{hi / lo:.1f}x"
            warnings.append(f"{name}: bootstrap interval {lo:.4g}..{hi:.4g} is {ratio} wide (> {factor:g}x)")
    return warnings


def summarise_lobo(table: pd.DataFrame) -> dict:
    ok = table[table["status"] == "ok"] if "status" in table else table
    if ok.empty:
        return {"lobo_mean_abs_loss_error": None, "lobo_largest_budget_loss_error": None}
    errors = ok["loss_rel_error"].where(ok["loss_rel_error"].notna(), ok.get("runs_mean_abs_rel_error"))
    largest = ok.sort_values("budget").iloc[-1]
    last = largest["loss_rel_error"]
    if not math.isfinite(last):
        last = largest.get("runs_mean_abs_rel_error", math.nan)
    return {"lobo_mean_abs_loss_error": float(np.nanmean(np.abs(errors))), "lobo_largest_budget_loss_error": float(last)}
