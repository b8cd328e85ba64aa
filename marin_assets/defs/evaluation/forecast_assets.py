"""Dagster wiring of the downstream forecast of a scaling suite, one partition per task set.

downstream_forecast: the suite runs' (final eval loss, downstream metric) -> loss->metric sigmoid
(evaluation.downstream_forecast), applied to the held-out run's preregistered loss prediction
(scaling's heldout_prediction, read from storage) -> the held-out run's metric, predicted before it
trains (refused once its downstream evaluation exists). heldout_downstream_check: the measured metric
of the held-out run against that forecast (error, inside the interval or not).
"""

import datetime as dt

import dagster as dg

from marin_assets.core import layout
from marin_assets.lineage.code_versions import versioned
from marin_assets.core.hashing import hash_json
from marin_assets.core.storage import MANIFEST_NAME, Storage
from marin_assets.evaluation import downstream_forecast
from marin_assets.defs.evaluation.downstream_eval_assets import local_partitions
from marin_assets.evaluation.task_sets import TaskSetsRegistry
from marin_assets.lineage.recording import record_output
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.train.hardware import LOCAL_PARTITIONS_METADATA
from marin_assets.scaling.run_results import RESULT_FILE, output_parts, run_parts

GROUP = "evaluation"
METRICS = ("acc", "correct_prob_norm")
FORECAST_FILE, CHECK_FILE, PREDICTION_FILE = "forecast.json", "check.json", "prediction.json"


def suite_points(st: Storage, suite: str, run_keys: list[str], task_set: str, metric: str
                 ) -> tuple[list, list, list, list]:
    """(losses, metric values, run keys, overall summaries) of the suite runs with a committed result and evaluation."""
    losses, values, used, overalls = [], [], [], []
    for key in run_keys:
        eval_parts = (layout.EVALUATION, suite, key, task_set)
        if not (st.is_committed(*run_parts(suite, key)) and st.is_committed(*eval_parts)):
            continue
        loss = st.read_json(*run_parts(suite, key), RESULT_FILE).get("final_eval_loss")
        if loss is not None:
            overall = st.read_json(*eval_parts, RESULT_FILE)["overall"]
            losses.append(float(loss)), values.append(float(overall[metric])), used.append(key), overalls.append(overall)
    return losses, values, used, overalls


def verdict(found: list[str]) -> str:
    """What a user reads first about a forecast: usable, or degenerate and why."""
    return "usable" if not found else "degenerate (chance plus noise, whatever its error): " + "; ".join(found)


def build_forecast_assets(suite: str, run_keys: list[str], registry: TaskSetsRegistry, suite_eval: str,
                          heldout_eval: str) -> list[dg.AssetsDefinition]:
    partitions = dg.StaticPartitionsDefinition(registry.names)
    forecast_parts = lambda ts: (layout.EVALUATION, suite, "forecast", ts)
    heldout_eval_parts = lambda ts: (layout.EVALUATION, suite, "heldout", ts)
    heldout_run_parts = output_parts(suite, "heldout", "run")
    # materialize-all forecasts the task sets it evaluates here (auto_evaluate, data present); the rest on demand
    local = {LOCAL_PARTITIONS_METADATA: local_partitions(registry, None, None)}

    @versioned({"metrics": METRICS})
    @dg.asset(name="downstream_forecast", partitions_def=partitions, group_name=GROUP, metadata=local,
              kinds={"python"}, deps=[dg.AssetDep(suite_eval), dg.AssetDep("heldout_prediction")],
              description=f"The {suite} held-out run's downstream metrics forecast in two steps (compute -> loss "
                          "-> metric, OLMo-ladder sigmoid, bootstrap interval), before it trains.")
    def downstream_forecast_asset(context: dg.AssetExecutionContext, storage: StorageResource):
        st, task_set = storage.storage, context.partition_key
        if st.is_committed(*heldout_eval_parts(task_set)):
            raise ValueError(f"the held-out run is already evaluated on {task_set} ({st.uri(*heldout_eval_parts(task_set))}):"
                             " a forecast made now would not be preregistered")
        if st.is_committed(*heldout_run_parts):  # as heldout_prediction: made before the run trains, or not at all
            raise ValueError(f"the held-out run is already trained ({st.uri(*heldout_run_parts)}): a forecast made "
                             "now would not be preregistered; delete that folder (and retrain) to forecast again")
        prediction_parts = output_parts(suite, "heldout", "prediction")
        st.require_committed(*prediction_parts)
        loss = st.read_json(*prediction_parts, PREDICTION_FILE)
        forecasts = {}
        for metric in METRICS:
            losses, values, used, overalls = suite_points(st, suite, run_keys, task_set, metric)
            result = downstream_forecast.forecast(losses, values, loss["predicted_loss"], tuple(loss["interval"]))
            found = downstream_forecast.problems(losses, values, result["params"], min(o["items"] for o in overalls),
                                                 overalls[0]["random"], metric)
            found = ([result["fit_failed"] + ": the forecast is the runs' mean"] if result["fit_failed"] else []) + found
            forecasts[metric] = {**result, "runs": used, "problems": found, "verdict": verdict(found)}
        # what proves it preregistered: when, and from which inputs (none of them the held-out run's)
        inputs = {"registered_at": dt.datetime.now(dt.UTC).isoformat(),
                  "loss_prediction_registered_at": loss.get("registered_at"),
                  "loss_prediction_data_version": st.content_hash(*prediction_parts),
                  "suite_evaluations": {key: st.content_hash(layout.EVALUATION, suite, key, task_set)
                                        for key in forecasts["acc"]["runs"]}}
        with st.atomic_dir(*forecast_parts(task_set)) as staged:
            staged.write_json({"task_set": task_set, "heldout": loss.get("run"), "forecasts": forecasts, **inputs},
                              FORECAST_FILE)
            acc = forecasts["acc"]
            return record_output(
                context, staged, recipe={"suite": suite, "task_set": task_set},
                output_hash=hash_json(forecasts), stats={"predicted_acc": acc["prediction"], "runs": len(acc["runs"])},
                extra_metadata={"registered_at": dg.MetadataValue.text(inputs["registered_at"]),
                                "verdict": dg.MetadataValue.text(acc["verdict"]),
                                "acc_interval": dg.MetadataValue.text(str(acc["interval"])),
                                **{f"{m}_verdict": dg.MetadataValue.text(f["verdict"]) for m, f in forecasts.items()}})

    @versioned({"metrics": METRICS})
    @dg.asset(name="heldout_downstream_check", partitions_def=partitions, group_name=GROUP, metadata=local,
              kinds={"python"}, deps=[downstream_forecast_asset, dg.AssetDep(heldout_eval)],
              description=f"The {suite} held-out run's measured downstream metrics against their forecast.")
    def heldout_downstream_check(context: dg.AssetExecutionContext, storage: StorageResource):
        st, task_set = storage.storage, context.partition_key
        st.require_committed(*forecast_parts(task_set))
        st.require_committed(*heldout_eval_parts(task_set))
        stored = st.read_json(*forecast_parts(task_set), FORECAST_FILE)
        forecasts = stored["forecasts"]
        measured = st.read_json(*heldout_eval_parts(task_set), RESULT_FILE)["overall"]
        checks = {m: {**downstream_forecast.check(forecasts[m], measured[m]),
                      "forecast_verdict": forecasts[m].get("verdict", "not judged (an older forecast)")} for m in METRICS}
        order = downstream_forecast.preregistration(stored.get("registered_at"), training_started_at(context, st))
        with st.atomic_dir(layout.EVALUATION, suite, "heldout_check", task_set) as staged:
            staged.write_json({**checks, "preregistration": order}, CHECK_FILE)
            return record_output(
                context, staged, recipe={"suite": suite, "task_set": task_set},
                output_hash=hash_json(checks),
                stats={**{f"{m}_{k}": v for m, c in checks.items() for k, v in c.items() if k != "forecast_verdict"},
                       "preregistered": order["preregistered"]},
                extra_metadata={"summary": dg.MetadataValue.text(f"{check_summary(checks['acc'])}; {order['why']}")})

    def training_started_at(context, st: Storage) -> str | None:
        """When the Dagster run that trained the held-out run started (its provenance names the run)."""
        if not st.is_committed(*heldout_run_parts):
            return None
        run_id = st.read_json(*heldout_run_parts, MANIFEST_NAME).get("run_id")
        stats = context.instance.get_run_stats(run_id) if run_id and context.instance.has_run(run_id) else None
        if stats is None or stats.start_time is None:
            return None
        return dt.datetime.fromtimestamp(stats.start_time, dt.UTC).isoformat()

    return [downstream_forecast_asset, heldout_downstream_check]


def check_summary(acc: dict) -> str:
    inside = "inside" if acc["within_interval"] else "outside"
    return (f"acc predicted {acc['predicted']:.4f}, measured {acc['actual']:.4f}, error {acc['error']:+.4f} "
            f"({inside} the interval); forecast {acc['forecast_verdict']}")
