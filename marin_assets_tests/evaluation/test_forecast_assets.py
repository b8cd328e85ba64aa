"""downstream_forecast and heldout_downstream_check through Dagster, on stored suite results whose
(loss, accuracy) pairs follow a known sigmoid: the forecast is preregistered (refused once the held-out
run is evaluated), and the check reports the held-out run's error against the forecast's interval."""

import dagster as dg
import numpy as np
import pytest

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.evaluation.downstream_forecast import preregistration, sigmoid
from marin_assets.defs.evaluation.forecast_assets import build_forecast_assets
from marin_assets.evaluation.task_sets import load_task_sets
from marin_assets.scaling.run_results import output_parts, run_parts
from marin_assets_tests.local_resources import local_resources

SUITE, TASK_SET = "toy_suite", "blimp_sample"
TRUE = (0.4, -3.0, 3.5, 0.5)
KEYS = [f"run{i}" for i in range(8)]


def commit_json(st: Storage, parts, name, payload):
    with st.atomic_dir(*parts) as staged:
        staged.write_json(payload, name)


def write_suite(st: Storage, curve=TRUE, items=6700):
    for key, loss in zip(KEYS, np.linspace(2.6, 4.4, len(KEYS))):
        commit_json(st, run_parts(SUITE, key), "result.json", {"final_eval_loss": float(loss)})
        acc = float(sigmoid(loss, *curve))
        commit_json(st, (layout.EVALUATION, SUITE, key, TASK_SET), "result.json",
                    {"overall": {"acc": acc, "correct_prob_norm": acc * 0.9, "items": items, "random": 0.5}})
    commit_json(st, output_parts(SUITE, "heldout", "prediction"), "prediction.json",
                {"run": "heldout", "predicted_loss": 2.45, "interval": [2.4, 2.5]})


def materialize(root, assets, name):
    stubs = [dg.AssetSpec(k) for k in ("scaling_downstream_eval", "heldout_prediction", "heldout_downstream_eval")]
    with dg.DagsterInstance.ephemeral() as instance:
        return dg.materialize([*assets, *stubs], partition_key=TASK_SET, instance=instance, raise_on_error=False,
                              resources=local_resources(str(root)), selection=[name])


def test_forecast_before_the_heldout_run_then_checked_after(tmp_path):
    st = Storage(str(tmp_path))
    write_suite(st)
    assets = build_forecast_assets(SUITE, KEYS, load_task_sets(), "scaling_downstream_eval", "heldout_downstream_eval")
    assert materialize(tmp_path, assets, "downstream_forecast").success
    forecast = st.read_json(layout.EVALUATION, SUITE, "forecast", TASK_SET, "forecast.json")["forecasts"]["acc"]
    truth = float(sigmoid(2.45, *TRUE))
    assert forecast["runs"] == KEYS and forecast["prediction"] == pytest.approx(truth, abs=0.01)
    assert forecast["interval"][0] <= truth <= forecast["interval"][1]
    assert forecast["verdict"] == "usable" and forecast["problems"] == []
    stored = st.read_json(layout.EVALUATION, SUITE, "forecast", TASK_SET, "forecast.json")
    assert stored["registered_at"] and sorted(stored["suite_evaluations"]) == KEYS  # inputs: the suite's runs only

    # the held-out run lands far below its forecast: the check says so
    commit_json(st, (layout.EVALUATION, SUITE, "heldout", TASK_SET), "result.json",
                {"overall": {"acc": truth - 0.2, "correct_prob_norm": truth * 0.9}})
    assert materialize(tmp_path, assets, "heldout_downstream_check").success
    check = st.read_json(layout.EVALUATION, SUITE, "heldout_check", TASK_SET, "check.json")
    assert not check["acc"]["within_interval"] and check["acc"]["error"] == pytest.approx(
        truth - 0.2 - forecast["prediction"])
    assert check["correct_prob_norm"]["within_interval"] and check["acc"]["forecast_verdict"] == "usable"
    assert check["preregistration"]["preregistered"] is False  # no held-out run folder: its start is unknown

    # once the held-out run is evaluated, a new forecast would not be preregistered
    failed = materialize(tmp_path, assets, "downstream_forecast")
    assert not failed.success
    assert "would not be preregistered" in failed.get_step_failure_events()[0].event_specific_data.error.to_string()


def test_a_forecast_is_refused_once_the_heldout_run_is_trained_and_its_lead_is_checked(tmp_path):
    st = Storage(str(tmp_path))
    write_suite(st)
    commit_json(st, output_parts(SUITE, "heldout", "run"), "result.json", {"final_eval_loss": 2.45})
    assets = build_forecast_assets(SUITE, KEYS, load_task_sets(), "scaling_downstream_eval", "heldout_downstream_eval")
    failed = materialize(tmp_path, assets, "downstream_forecast")
    assert "already trained" in failed.get_step_failure_events()[0].event_specific_data.error.to_string()
    before = preregistration("2026-12-07T04:28:46+00:00", "2026-12-07T04:28:49+00:00")
    assert before["preregistered"] and before["lead_s"] == 3.0
    after = preregistration("2026-12-07T04:31:00+00:00", "2026-12-07T04:28:49+00:00")  # the failing case
    assert not after["preregistered"] and "after the held-out run started training" in after["why"]


def test_a_forecast_from_runs_at_chance_says_it_is_degenerate(tmp_path):
    """Tiny CPU models sit near chance: the accuracies of the suite differ by less than the sampling noise
    of 400 pairs, and the forecast's metadata says so in words instead of reporting a bare number."""
    st = Storage(str(tmp_path))
    write_suite(st, curve=(0.01, -3.0, 3.5, 0.5), items=400)  # acc 0.500 .. 0.510
    assets = build_forecast_assets(SUITE, KEYS, load_task_sets(), "scaling_downstream_eval", "heldout_downstream_eval")
    result = materialize(tmp_path, assets, "downstream_forecast")
    assert result.success
    forecast = st.read_json(layout.EVALUATION, SUITE, "forecast", TASK_SET, "forecast.json")["forecasts"]["acc"]
    assert forecast["verdict"].startswith("degenerate") and "sampling noise" in forecast["verdict"]
    assert "of chance 0.5" in forecast["verdict"]
    metadata = result.asset_materializations_for_node("downstream_forecast")[0].metadata
    assert metadata["verdict"].value.startswith("degenerate")
