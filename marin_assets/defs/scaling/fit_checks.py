"""Asset checks of the scaling stage: the preregistered prediction's error, bracketed minima,
leave-one-budget-out errors of both approaches, and bootstrap intervals too wide to trust.

The fit checks read the tables the fits stored and judge them with the recipe's tolerances, so
they serve a trained suite and an external one (key prefix) alike.
"""

import math

import dagster as dg
import pandas as pd

from marin_assets.core.metadata_tables import metadata_table
from marin_assets.resources.storage_resource import StorageResource

from marin_assets.scaling import result_paths, validation
from marin_assets.defs.scaling.heldout_assets import PREDICTION_FILE, heldout_run_parts, prediction_mismatch, prediction_parts
from marin_assets.scaling.observations import metric_value
from marin_assets.scaling.suite_observations import attach_downstream
from marin_assets.scaling.suite import FitSettings, ScalingRecipe

TARGET_RELATIVE_ERROR = 0.02


def relative_error(predicted: float, observed: float) -> float:
    return (predicted - observed) / observed


def heldout_message(prediction: dict, observed: dict, error: float, preregistered: bool, metric: str,
                    value: float | None, mismatch: str | None = None) -> str:
    """What a user reads first: the error against the target, and whether the prediction came first."""
    if mismatch:
        return mismatch
    if not preregistered:
        return (f"not preregistered: the prediction was registered at {prediction['registered_at']}, after the "
                f"held-out run started at {observed['started_at']}")
    if value is None:
        return f"the held-out run reported no {metric}"
    verdict = "within" if abs(error) <= TARGET_RELATIVE_ERROR else "exceeds"
    return (f"predicted {metric} {prediction['predicted_loss']:.4f}, observed {value:.4f}: "
            f"relative error {error:+.2%} {verdict} the {TARGET_RELATIVE_ERROR:.0%} target")


def _lobo_result(report: dict, fit: FitSettings) -> dg.AssetCheckResult:
    table = pd.DataFrame(report["leave_one_budget_out"])
    problems = validation.largest_budget_problems(table, fit.lobo_loss_tolerance, fit.lobo_n_opt_tolerance)
    # in plain words: on a suite of two or three budgets, refitting without one leaves too little to predict it
    description = (f"every left-out budget predicted within tolerance ({len(table)} refits)" if not problems else
                   f"Information, not a failure: refitted without one of its {len(table)} budgets, the law does not "
                   f"predict it within tolerance ({'; '.join(problems)}). More budgets make this test meaningful.")
    return dg.AssetCheckResult(
        passed=not problems, severity=dg.AssetCheckSeverity.WARN, description=description,
        metadata={"problems": " | ".join(problems) or "none", "loss_tolerance": fit.lobo_loss_tolerance,
                  "n_opt_tolerance": fit.lobo_n_opt_tolerance,
                  "largest_budget_loss_error": report.get("lobo_largest_budget_loss_error") or "none",
                  "mean_abs_loss_error": report.get("lobo_mean_abs_loss_error") or "none",
                  "leave_one_budget_out": dg.MetadataValue.md(
                      table.to_markdown(index=False, floatfmt=".4g") if len(table) else "none")},
    )


def build_fit_checks(name: str, fit: FitSettings, key_prefix: list[str] | None = None,
                     isoflop_approach: bool = True) -> list[dg.AssetChecksDefinition]:
    """Checks of the fit assets of suite `name` (asset keys under `key_prefix` for an external suite);
    `isoflop_approach` False: no Approach 2 asset, so none of its checks."""
    iso_key = dg.AssetKey([*(key_prefix or []), "isoflop_fit"])
    par_key = dg.AssetKey([*(key_prefix or []), "parametric_fit"])

    def read(kind: str, st) -> dict:
        return st.read_json(*result_paths.output_parts(name, "fits", kind), f"{kind}.json")

    @dg.asset_check(asset=iso_key, name="isoflop_minima_bracketed",
                    description="Every budget has >= 3 runs and a bracketed, convex minimum.")
    def isoflop_minima_bracketed(storage: StorageResource) -> dg.AssetCheckResult:
        report = read("isoflop", storage.storage)
        bad = [b for b in report["budgets"] if b["status"] != "ok"]
        usable = len(report["budgets"]) - len(bad)
        return dg.AssetCheckResult(
            passed=not bad, severity=dg.AssetCheckSeverity.WARN,
            description=(f"all {usable} budgets bracketed" if not bad else
                         f"{len(bad)} of {len(report['budgets'])} budgets excluded from the power laws: "
                         + " | ".join(b["message"] for b in bad)),
            metadata={"problems": " | ".join(b["message"] for b in bad) or "none", "usable_budgets": usable},
        )

    def lobo_check(kind: str, approach: str, key: dg.AssetKey) -> dg.AssetChecksDefinition:
        @dg.asset_check(asset=key, name=f"{kind}_leave_one_budget_out",
                        description=f"{approach} refitted without each budget predicts its N* and loss; the largest "
                                    f"budget's loss error <= {fit.lobo_loss_tolerance:.1%} and N* error <= "
                                    f"{fit.lobo_n_opt_tolerance:.0%}.")
        def leave_one_budget_out(storage: StorageResource) -> dg.AssetCheckResult:
            return _lobo_result(read(kind, storage.storage), fit)

        return leave_one_budget_out

    @dg.asset_check(asset=par_key, name="parametric_intervals_narrow",
                    description=f"Every bootstrap interval of the law's parameters has hi/lo <= {fit.max_interval_ratio:g}.")
    def parametric_intervals_narrow(storage: StorageResource) -> dg.AssetCheckResult:
        report = read("parametric", storage.storage)
        intervals = {k: tuple(v) for k, v in report["intervals"].items()}
        wide = validation.wide_intervals(intervals, fit.max_interval_ratio)
        return dg.AssetCheckResult(
            passed=not wide, severity=dg.AssetCheckSeverity.WARN,
            description=interval_description(intervals, wide, fit.max_interval_ratio),
            metadata={"wide": " | ".join(wide) or "none", "max_ratio": fit.max_interval_ratio,
                      # one row per parameter: the interval's ends and hi/lo, 4 significant figures
                      "intervals": metadata_table(
                          [{"parameter": k, "lo": lo, "hi": hi, "hi_over_lo": hi / lo if lo else None}
                           for k, (lo, hi) in report["intervals"].items()],
                          columns=["parameter", "lo", "hi", "hi_over_lo"])},
        )

    checks = [isoflop_minima_bracketed, lobo_check("isoflop", "Approach 2", iso_key)] if isoflop_approach else []
    checks += [lobo_check("parametric", "Approach 3", par_key)]
    return checks + ([parametric_intervals_narrow] if fit.bootstrap else [])


def interval_description(intervals: dict[str, tuple[float, float]], wide: list[str], limit: float) -> str:
    """The interval check's result in plain words: on a small suite wide intervals are information, not a failure."""
    if not wide:
        return f"all {len(intervals)} parameters pinned down: every bootstrap hi/lo <= {limit:g}"
    loose = [k for k, (lo, hi) in intervals.items() if not (0 < lo and hi / lo <= limit)]
    ratios = [hi / lo for k, (lo, hi) in intervals.items() if k in loose and lo > 0 and math.isfinite(hi / lo)]
    widest = f"widest hi/lo {max(ratios):.3g}" if ratios else "an interval reaches 0"
    # Why WARN and this wording: a CPU-sized suite cannot pin these down, and that is what the check measures.
    return (f"Information, not a failure: this suite does not pin down {len(loose)} of {len(intervals)} parameters "
            f"of the law ({', '.join(loose)}; {widest}, limit {limit:g}). The fitted law is stored; trust its "
            "parameters only as far as the `intervals` table allows. More model sizes per budget, more budgets or "
            "longer runs narrow the intervals (docs/ui.md, 'Why the sample's scaling fits warn').")


def build_scaling_checks(recipe: ScalingRecipe) -> list[dg.AssetChecksDefinition]:
    name = recipe.name

    @dg.asset_check(asset="heldout_run", name="heldout_prediction_error",
                    description=f"|predicted - observed| / observed of the held-out run <= {TARGET_RELATIVE_ERROR:.0%}, "
                                "and the prediction was registered before the run started.")
    def heldout_prediction_error(storage: StorageResource) -> dg.AssetCheckResult:
        st = storage.storage
        prediction = st.read_json(*prediction_parts(name), PREDICTION_FILE)
        observed = st.read_json(*heldout_run_parts(name), result_paths.RESULT_FILE)
        preregistered = prediction["registered_at"] < observed["started_at"]
        # The same metric the fit (and so the prediction) used, read as the fit reads it.
        metric = recipe.fit.metric
        attach_downstream(st, name, [observed], metric, run_key="heldout")  # a downstream metric: its evaluation
        mismatch = prediction_mismatch(prediction, observed.get("run"), metric)
        loss = metric_value(observed, metric)
        error = relative_error(prediction["predicted_loss"], loss) if loss is not None else float("inf")
        return dg.AssetCheckResult(
            passed=bool(preregistered and not mismatch and abs(error) <= TARGET_RELATIVE_ERROR),
            severity=dg.AssetCheckSeverity.WARN,
            description=heldout_message(prediction, observed, error, preregistered, metric, loss, mismatch),
            metadata={
                "metric": metric,
                "predicted_loss": prediction["predicted_loss"], "observed_loss": loss if loss is not None else "none",
                "relative_error": error, "target": TARGET_RELATIVE_ERROR,
                "prediction_interval": str(prediction["interval"]),
                "registered_at": prediction["registered_at"], "run_started_at": observed["started_at"],
                "preregistered": preregistered,
                "parametric_fit_data_version": prediction["parametric_fit_data_version"],
            },
        )

    return build_fit_checks(name, recipe.fit) + ([heldout_prediction_error] if recipe.heldout else [])
