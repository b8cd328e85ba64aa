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

from marin_assets.scaling import validation
from marin_assets.scaling.bootstrap import bootstrap_parametric, prediction_intervals
from marin_assets.scaling.isoflop import IsoflopFit, fit_isoflop
from marin_assets.scaling.laws import LAWS, Law, law_from_params
from marin_assets.scaling.observations import Observations
from marin_assets.scaling.parametric import FitError, fit_parametric
from marin_assets.scaling.fit_settings import FLOPS_MODEL, FLOPS_PER_PARAM_TOKEN, FitSettings

# Where runs and fits live (the fitters read them; what one run writes is scaling.run_results).
from marin_assets.scaling.result_paths import RESULT_FILE, output_parts, run_parts  # noqa: E402,F401


def isoflop_report(obs: Observations, settings: FitSettings) -> tuple[IsoflopFit, dict]:
    fit = fit_isoflop(obs.table, robust=settings.robust_isoflop, level=settings.level,
                      flops_per_param_token=FLOPS_PER_PARAM_TOKEN)
    lobo = validation.lobo_isoflop(obs.table, robust=settings.robust_isoflop, flops_per_param_token=FLOPS_PER_PARAM_TOKEN)
    problems = validation.largest_budget_problems(lobo, settings.lobo_loss_tolerance, settings.lobo_n_opt_tolerance)
    return fit, {**fit.as_dict(), "flops_model": FLOPS_MODEL, "n_runs": len(obs.table), "metric": settings.metric,
                 "excluded": [vars(e) for e in obs.excluded], "warnings": obs.warnings + fit.warnings + problems,
                 "leave_one_budget_out": lobo.to_dict("records"), "lobo_problems": problems,
                 **validation.summarise_lobo(lobo)}


def _fit_form(table: pd.DataFrame, settings: FitSettings, law: str):
    return fit_parametric(table["N"], table["D"], table["loss"], method=settings.method, delta=settings.delta, law=law,
                          covariates=validation.covariates_of(table, law), weights=validation.row_weights(table))


def _lobo(table: pd.DataFrame, settings: FitSettings, law: str) -> pd.DataFrame:
    return validation.lobo_parametric(table, law=law, method=settings.method, delta=settings.delta,
                                      robust=settings.robust_isoflop, flops_per_param_token=FLOPS_PER_PARAM_TOKEN)


def compare_laws(table: pd.DataFrame, settings: FitSettings, chosen, chosen_lobo: pd.DataFrame) -> list[dict]:
    """Every registered form on the same runs: AIC (likelihood fits) and leave-one-budget-out loss error."""
    rows = []
    for name in LAWS:
        absent = [c for c in LAWS[name].covariates if c not in table or table[c].isna().all()]
        if name == settings.law:
            fit, lobo = chosen, chosen_lobo
        elif absent:
            rows.append({"law": name, "status": f"not fitted: no run records {', '.join(absent)}"})
            continue
        else:
            try:
                fit, lobo = _fit_form(table, settings, name), _lobo(table, settings, name)
            except FitError as exc:
                rows.append({"law": name, "status": f"not fitted: {exc}"})
                continue
        residual = fit.law.loss(table["N"], table["D"]) / table["loss"] - 1
        rows.append({"law": name, "status": "ok", "selected": name == settings.law, "n_params": fit.n_params,
                     "aic": fit.aic(), "max_abs_relative_residual": float(np.max(np.abs(residual))),
                     **validation.summarise_lobo(lobo), **fit.parameters(), "unidentified": fit.unidentified})
    return rows


def parametric_report(obs: Observations, settings: FitSettings):
    table = obs.table
    needed = len(LAWS[settings.law].param_names)
    if len(table) < needed:
        raise FitError(f"Approach 3 ({settings.law}) needs >= {needed} usable runs, have {len(table)} "
                       f"(excluded: {obs.exclusion_summary()})")
    warnings = list(obs.warnings)
    missing_u = int(table["U"].isna().sum())
    if "U" in LAWS[settings.law].covariates and missing_u:
        warnings.append(f"{missing_u} runs record no unique-token count: fitted as single-epoch (U = D)")
    fit = _fit_form(table, settings, settings.law)
    boot = None
    if settings.bootstrap:
        boot = bootstrap_parametric(table["N"], table["D"], table["loss"], fit, n_boot=settings.bootstrap,
                                    seed=settings.seed, level=settings.level, workers=settings.bootstrap_workers,
                                    covariates=validation.covariates_of(table, settings.law),
                                    weights=validation.row_weights(table))
    # An unidentified parameter's resamples all sit at its start: no interval to report.
    intervals = {k: v for k, v in (boot.intervals() if boot else {}).items() if k not in fit.unidentified}
    warnings += [f"{name}: {why}" for name, why in fit.unidentified.items()]
    wide = validation.wide_intervals(intervals, settings.max_interval_ratio)
    lobo = _lobo(table, settings, settings.law)
    problems = validation.largest_budget_problems(lobo, settings.lobo_loss_tolerance, settings.lobo_n_opt_tolerance)
    predicted = fit.law.loss(table["N"], table["D"])
    report = {
        **fit.as_dict(), "flops_model": FLOPS_MODEL, "n_runs": len(table), "metric": settings.metric,
        "intervals": intervals, "bootstrap_samples": settings.bootstrap,
        "bootstrap_failed": boot.n_failed if boot else 0,
        "max_abs_relative_residual": float(np.max(np.abs(predicted / table["loss"] - 1))),
        "excluded": [vars(e) for e in obs.excluded], "warnings": warnings + wide + problems,
        "wide_intervals": wide, "leave_one_budget_out": lobo.to_dict("records"), "lobo_problems": problems,
        **validation.summarise_lobo(lobo),
        "law_comparison": compare_laws(table, settings, fit, lobo) if settings.compare_laws else [],
    }
    return fit, boot, report


def law_from_report(report: dict) -> Law:
    return law_from_params(report)


def predictions_table(law: Law, iso: dict | None, targets: list[float], boot_laws=None,
                      level: float = 0.95, lobo_laws=None) -> pd.DataFrame:
    """Per target budget: Approach 3's compute-optimal N, D and loss (with bootstrap intervals and the
    range of the leave-one-budget-out refits' predictions), Approach 2's N*, D* power laws and
    optimal-loss law (when the isoFLOP fit exists), and whether the two approaches disagree beyond
    Approach 3's intervals."""
    n_opt, d_opt = law.compute_optimal(np.array(targets), FLOPS_PER_PARAM_TOKEN)
    table = pd.DataFrame({"C": targets, "N_opt": n_opt, "D_opt": d_opt, "loss": law.loss(n_opt, d_opt)})
    if boot_laws:
        table = table.merge(prediction_intervals(boot_laws, targets, level, FLOPS_PER_PARAM_TOKEN), on="C")
    if lobo_laws:
        table = table.merge(lobo_spread(lobo_laws, targets), on="C")
    if iso is not None:
        C = np.array(targets)
        table["N_opt_isoflop"] = iso["N_opt_coefficient"] * C ** iso["N_opt_exponent"]
        table["D_opt_isoflop"] = iso["D_opt_coefficient"] * C ** iso["D_opt_exponent"]
        if iso.get("loss_opt_law"):
            table["loss_isoflop"] = IsoflopFit.from_dict(iso).loss_law(C)
        if boot_laws:
            table["approaches"] = [approach_agreement(row) for row in table.to_dict("records")]
    return table


def lobo_spread(laws: list[Law], targets: list[float]) -> pd.DataFrame:
    """Per target: the lowest and highest N* and loss the leave-one-budget-out refits predict."""
    rows = []
    for C in targets:
        n_opt, loss = [], []
        for refit in laws:
            n, d = refit.compute_optimal(float(C), FLOPS_PER_PARAM_TOKEN)
            n_opt.append(float(n)), loss.append(float(refit.loss(n, d)))
        rows.append({"C": C, "N_opt_lobo_lo": min(n_opt), "N_opt_lobo_hi": max(n_opt),
                     "loss_lobo_lo": min(loss), "loss_lobo_hi": max(loss)})
    return pd.DataFrame(rows)


def approach_agreement(row: dict) -> str:
    """"agree", or which of Approach 2's predictions fall outside Approach 3's bootstrap interval."""
    outside = []
    for name, iso_name in (("N_opt", "N_opt_isoflop"), ("D_opt", "D_opt_isoflop"), ("loss", "loss_isoflop")):
        lo, hi, value = row.get(f"{name}_lo"), row.get(f"{name}_hi"), row.get(iso_name)
        if value is not None and lo is not None and np.isfinite(value) and not (lo <= value <= hi):
            outside.append(f"Approach 2's {name} {value:.4g} is outside Approach 3's interval [{lo:.4g}, {hi:.4g}]")
    return "agree" if not outside else "disagree: " + "; ".join(outside)


def parameter_rows(values: dict[str, float], intervals: dict | None = None) -> list[dict]:
    """(parameter, value, low, high) per fitted quantity, for the summary table; no interval: None.

    The UI shows these rounded (metadata_table); the reports keep every digit.
    """
    intervals = intervals or {}
    rows = []
    for name, value in values.items():
        low, high = intervals.get(name) or (None, None)
        rows.append({"parameter": name, "value": float(value), "low": _finite(low), "high": _finite(high)})
    return rows


def isoflop_parameters(fit: IsoflopFit) -> list[dict]:
    """The isoFLOP laws' exponents (with their t intervals), coefficients and the L*(C) law's terms."""
    rows = parameter_rows(
        {"N_opt_exponent": fit.N_law.exponent, "D_opt_exponent": fit.D_law.exponent},
        {"N_opt_exponent": fit.N_law.exponent_ci, "D_opt_exponent": fit.D_law.exponent_ci},
    )
    rows += parameter_rows({"N_opt_coefficient": fit.N_law.coefficient, "D_opt_coefficient": fit.D_law.coefficient})
    if fit.loss_law is not None:
        law = fit.loss_law  # C0 is the fixed scale of C, not fitted; shown to read A by
        rows += parameter_rows({"loss_opt_E": law.E, "loss_opt_A": law.A, "loss_opt_gamma": law.gamma,
                                "loss_opt_C0": law.C0})
    return rows


def _finite(value) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None
