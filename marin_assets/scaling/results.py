"""Where the suite's files live and what they say; the fits as plain functions of stored results.

scaling/<suite>/runs/<key>/result.json          one trained run (N, D, C, flops_model, loss, status)
scaling/<suite>/fits/isoflop|parametric/         fitted laws, plot-ready tables, PNGs
scaling/<suite>/predictions/                     target budgets: compute-optimal N, D and loss
scaling/<suite>/heldout/prediction|run/          the preregistered prediction, then the run
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.scaling.bootstrap import bootstrap_parametric, prediction_intervals
from marin_assets.scaling.isoflop import IsoflopFit, fit_isoflop
from marin_assets.scaling.observations import Observations, collect_observations
from marin_assets.scaling.parametric import FitError, ParametricLaw, fit_parametric
from marin_assets.scaling.suite import FLOPS_MODEL, FLOPS_PER_PARAM_TOKEN, ScalingRecipe, SuiteRun

RESULT_FILE = "result.json"


def run_parts(suite: str, key: str) -> tuple[str, ...]:
    return (layout.SCALING, suite, "runs", key)


def output_parts(suite: str, *name: str) -> tuple[str, ...]:
    return (layout.SCALING, suite, *name)


def run_result(run: SuiteRun, final_eval_loss: float, *, vocab_size: int, num_params: int,
               flops_per_token: float, extra: dict | None = None) -> dict:
    """result.json of one run; `status` says whether the fits may use it."""
    finite = isinstance(final_eval_loss, (int, float)) and math.isfinite(final_eval_loss)
    return {
        **run.describe(),
        "final_eval_loss": final_eval_loss if finite else None,
        "status": "succeeded" if finite else "diverged",
        "vocab_size": vocab_size,
        "num_params_total": num_params,
        "maxtext_flops": flops_per_token * run.D,  # MaxText's count, incl. unembedding and attention
        **(extra or {}),
    }


def read_results(storage: Storage, suite: str, runs: list[SuiteRun]) -> tuple[list[dict], list[str]]:
    """Committed results of the suite's runs, and the keys with none yet (not trained or failed)."""
    results, missing = [], []
    for run in runs:
        parts = run_parts(suite, run.key)
        if storage.is_committed(*parts):
            results.append(storage.read_json(*parts, RESULT_FILE))
        else:
            missing.append(run.key)
    return results, missing


def observations_for(storage: Storage, recipe: ScalingRecipe, runs: list[SuiteRun]) -> tuple[Observations, list[str]]:
    results, missing = read_results(storage, recipe.name, runs)
    obs = collect_observations(results, max_loss=recipe.fit.max_loss)
    if missing:
        obs.warnings.append(f"{len(missing)} planned runs have no result yet: {', '.join(missing)}")
    return obs, missing


def isoflop_report(obs: Observations, recipe: ScalingRecipe) -> tuple[IsoflopFit, dict]:
    fit = fit_isoflop(obs.table, robust=recipe.fit.robust_isoflop, level=recipe.fit.level,
                      flops_per_param_token=FLOPS_PER_PARAM_TOKEN)
    return fit, {**fit.as_dict(), "flops_model": FLOPS_MODEL, "n_runs": len(obs.table),
                 "excluded": [vars(e) for e in obs.excluded], "warnings": obs.warnings + fit.warnings}


def parametric_report(obs: Observations, recipe: ScalingRecipe):
    table = obs.table
    settings = recipe.fit
    if len(table) < 5:
        raise FitError(f"Approach 3 needs >= 5 usable runs, have {len(table)} "
                       f"(excluded: {obs.exclusion_summary()})")
    fit = fit_parametric(table["N"], table["D"], table["loss"], method=settings.method, delta=settings.delta)
    boot = None
    if settings.bootstrap:
        boot = bootstrap_parametric(table["N"], table["D"], table["loss"], fit, n_boot=settings.bootstrap,
                                    seed=settings.seed, level=settings.level,
                                    workers=settings.bootstrap_workers)
    predicted = fit.law.loss(table["N"], table["D"])
    report = {
        **fit.as_dict(), "flops_model": FLOPS_MODEL, "n_runs": len(table),
        "intervals": boot.intervals() if boot else {}, "bootstrap_samples": settings.bootstrap,
        "bootstrap_failed": boot.n_failed if boot else 0,
        "max_abs_relative_residual": float(np.max(np.abs(predicted / table["loss"] - 1))),
        "excluded": [vars(e) for e in obs.excluded], "warnings": list(obs.warnings),
    }
    return fit, boot, report


def law_from_report(report: dict) -> ParametricLaw:
    return ParametricLaw(**{k: report[k] for k in ("E", "A", "B", "alpha", "beta")})


def predictions_table(law: ParametricLaw, iso: dict | None, targets: list[float], boot_laws=None,
                      level: float = 0.95) -> pd.DataFrame:
    """Per target budget: Approach 3's compute-optimal N, D and loss (with bootstrap intervals) and
    Approach 2's N*, D* power laws (when the isoFLOP fit exists)."""
    n_opt, d_opt = law.compute_optimal(np.array(targets), FLOPS_PER_PARAM_TOKEN)
    table = pd.DataFrame({"C": targets, "N_opt": n_opt, "D_opt": d_opt, "loss": law.loss(n_opt, d_opt)})
    if boot_laws:
        table = table.merge(prediction_intervals(boot_laws, targets, level, FLOPS_PER_PARAM_TOKEN), on="C")
    if iso is not None:
        C = np.array(targets)
        table["N_opt_isoflop"] = iso["N_opt_coefficient"] * C ** iso["N_opt_exponent"]
        table["D_opt_isoflop"] = iso["D_opt_coefficient"] * C ** iso["D_opt_exponent"]
    return table
