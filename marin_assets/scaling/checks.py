"""Asset checks of the scaling stage: the preregistered prediction's error, and bracketed minima."""


import dagster as dg

from marin_assets.resources.storage import StorageResource

from marin_assets.scaling import results
from marin_assets.scaling.heldout import PREDICTION_FILE, heldout_run_parts, prediction_parts
from marin_assets.scaling.suite import ScalingRecipe

TARGET_RELATIVE_ERROR = 0.02


def relative_error(predicted: float, observed: float) -> float:
    return (predicted - observed) / observed


def heldout_message(prediction: dict, observed: dict, error: float, preregistered: bool) -> str:
    """What a user reads first: the error against the target, and whether the prediction came first."""
    if not preregistered:
        return (f"not preregistered: the prediction was registered at {prediction['registered_at']}, after the "
                f"held-out run started at {observed['started_at']}")
    if observed["final_eval_loss"] is None:
        return "the held-out run reported no final_eval_loss"
    verdict = "within" if abs(error) <= TARGET_RELATIVE_ERROR else "exceeds"
    return (f"predicted {prediction['predicted_loss']:.4f}, observed {observed['final_eval_loss']:.4f}: "
            f"relative error {error:+.2%} {verdict} the {TARGET_RELATIVE_ERROR:.0%} target")


def build_scaling_checks(recipe: ScalingRecipe) -> list[dg.AssetChecksDefinition]:
    name = recipe.name

    @dg.asset_check(asset="heldout_run", name="heldout_prediction_error",
                    description=f"|predicted - observed| / observed of the held-out run <= {TARGET_RELATIVE_ERROR:.0%}, "
                                "and the prediction was registered before the run started.")
    def heldout_prediction_error(storage: StorageResource) -> dg.AssetCheckResult:
        st = storage.storage
        prediction = st.read_json(*prediction_parts(name), PREDICTION_FILE)
        observed = st.read_json(*heldout_run_parts(name), results.RESULT_FILE)
        preregistered = prediction["registered_at"] < observed["started_at"]
        loss = observed["final_eval_loss"]
        error = relative_error(prediction["predicted_loss"], loss) if loss is not None else float("inf")
        return dg.AssetCheckResult(
            passed=bool(preregistered and abs(error) <= TARGET_RELATIVE_ERROR),
            severity=dg.AssetCheckSeverity.WARN,
            description=heldout_message(prediction, observed, error, preregistered),
            metadata={
                "predicted_loss": prediction["predicted_loss"], "observed_loss": loss if loss is not None else "none",
                "relative_error": error, "target": TARGET_RELATIVE_ERROR,
                "prediction_interval": str(prediction["interval"]),
                "registered_at": prediction["registered_at"], "run_started_at": observed["started_at"],
                "preregistered": preregistered,
                "parametric_fit_data_version": prediction["parametric_fit_data_version"],
            },
        )

    @dg.asset_check(asset="isoflop_fit", name="isoflop_minima_bracketed",
                    description="Every budget has >= 3 runs and a bracketed, convex minimum.")
    def isoflop_minima_bracketed(storage: StorageResource) -> dg.AssetCheckResult:
        report = storage.storage.read_json(*results.output_parts(name, "fits", "isoflop"), "isoflop.json")
        bad = [b for b in report["budgets"] if b["status"] != "ok"]
        usable = len(report["budgets"]) - len(bad)
        return dg.AssetCheckResult(
            passed=not bad, severity=dg.AssetCheckSeverity.WARN,
            description=(f"all {usable} budgets bracketed" if not bad else
                         f"{len(bad)} of {len(report['budgets'])} budgets excluded from the power laws: "
                         + " | ".join(b["message"] for b in bad)),
            metadata={"problems": " | ".join(b["message"] for b in bad) or "none",
                      "usable_budgets": len(report["budgets"]) - len(bad)},
        )

    checks = [isoflop_minima_bracketed]
    return checks + ([heldout_prediction_error] if recipe.heldout else [])
