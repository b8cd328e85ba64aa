"""fit.metric naming a downstream metric of the suite's runs: `downstream:<task set>:<measure>`, read from
each run's committed evaluation (evaluation/<suite>/<run>/<task set>/result.json), fitted by the real fits."""

import json

import dagster as dg
import pytest
import yaml

from marin_assets.core.recipes import RecipeError, load_recipe
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.defs.scaling.definitions import build_defs
from marin_assets.scaling.fit_metric import UnknownMetricError, downstream_value, metric_key
from marin_assets.scaling.results import RESULT_FILE, law_from_report
from marin_assets.scaling.suite import ScalingRecipe, heldout_run, load_scaling_recipe, suite_runs
from marin_assets.scaling.suite_observations import evaluation_parts, observations_for
from marin_assets_tests.local_resources import local_resources
from marin_assets_tests.scaling.suite_fixture import LAW, fixture_recipe, synthetic_loss, write_result

TASK_SET = "blimp_sample"
OFFSET = 1.5  # planted: every run's error = its loss - 1.5, so the fitted law is LAW with E - 1.5


def _overall(acc: float) -> dict:
    return {"acc": acc, "centered_acc": 2 * acc - 1, "correct_prob_norm": acc - 0.1, "correct_logprob": -3.0 * acc,
            "bpb": 2.0 - acc, "random": 0.5, "items": 400, "ties": 0}


def _write_eval(st, suite: str, key: str, acc: float) -> None:
    with st.atomic_dir(*evaluation_parts(suite, key, TASK_SET)) as staged:
        staged.write_json({"task_set": TASK_SET, "overall": _overall(acc)}, RESULT_FILE)


def test_downstream_selectors_name_a_falling_measure_of_a_task_set():
    assert metric_key("downstream:blimp_sample:error") == metric_key("downstream/blimp_sample/error") \
        == "downstream/blimp_sample/error"
    overall = _overall(0.7)
    assert downstream_value(overall, "error") == pytest.approx(0.3)
    assert downstream_value(overall, "centered_error") == pytest.approx(0.6)
    assert downstream_value(overall, "prob_error") == pytest.approx(0.4)
    assert downstream_value(overall, "nll") == pytest.approx(2.1)
    assert downstream_value(overall, "bpb") == pytest.approx(1.3)


@pytest.mark.parametrize("metric, match", [
    ("downstream:blimp_sample:acc", r"acc rises with compute.*use downstream:blimp_sample:error instead"),
    ("downstream:blimp_sample:correct_prob_norm", r"use downstream:blimp_sample:prob_error"),
    ("downstream:blimp_sample:f1", r"unknown downstream measure 'f1'; use one of error, centered_error"),
    ("downstream:blimp_sample", r"downstream:<task set>:<measure>"),
    ("downstream::error", r"downstream:<task set>:<measure>"),
])
def test_a_bad_downstream_selector_is_refused_naming_the_recipe_file_and_field(tmp_path, metric, match):
    raw = load_scaling_recipe("scaling/cpu_suite.yaml").model_dump(mode="json")
    raw["fit"]["metric"] = metric
    path = tmp_path / "bad_suite.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(RecipeError, match=match) as err:
        load_recipe(path, ScalingRecipe)
    assert "bad_suite.yaml" in str(err.value) and f"fit.metric {metric!r}" in str(err.value)


def _suite_with_evaluations(root, metric: str, skip: int | None = None):
    fit = {**fixture_recipe().fit.model_dump(mode="json"), "metric": metric, "bootstrap": 0, "compare_laws": False}
    recipe = fixture_recipe(fit=fit)
    st = StorageResource(root_uri=str(root)).storage
    runs = suite_runs(recipe)
    for i, run in enumerate(runs):
        loss = synthetic_loss(run)
        write_result(st, recipe.name, run, loss)
        if i != skip:
            _write_eval(st, recipe.name, run.key, 1.0 - (loss - OFFSET))
    return recipe, st, runs


def test_the_fits_read_each_runs_evaluation_and_exclude_an_unevaluated_run_saying_why(tmp_path):
    recipe, st, runs = _suite_with_evaluations(tmp_path, f"downstream:{TASK_SET}:error", skip=2)
    obs, missing = observations_for(st, recipe, runs)
    assert not missing and len(obs.table) == len(runs) - 1
    expected = {r.key: synthetic_loss(r) - OFFSET for i, r in enumerate(runs) if i != 2}
    assert dict(zip(obs.table["run"], obs.table["loss"])) == pytest.approx(expected)
    assert {e.run: e.reason for e in obs.excluded} == {runs[2].key: f"downstream:{TASK_SET}:error is None"}


def test_a_task_set_no_run_was_evaluated_on_is_an_error_naming_it(tmp_path):
    recipe, st, runs = _suite_with_evaluations(tmp_path, "downstream:blimp:error")  # evaluations are on blimp_sample
    with pytest.raises(UnknownMetricError, match=r"downstream evaluation on task set 'blimp'"):
        observations_for(st, recipe, runs)


@pytest.mark.slow  # a Dagster materialization of the real fit (~1 min on the shared box)
def test_parametric_fit_of_a_downstream_metric_recovers_the_planted_law_and_depends_on_the_evaluations(tmp_path):
    recipe, st, runs = _suite_with_evaluations(tmp_path, f"downstream:{TASK_SET}:error")
    assets = [*build_defs(recipe).assets,
              dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"])),
              dg.AssetSpec("scaling_downstream_eval")]
    fit = next(a for a in assets if isinstance(a, dg.AssetsDefinition) and dg.AssetKey("parametric_fit") in a.keys)
    assert dg.AssetKey("scaling_downstream_eval") in fit.asset_deps[dg.AssetKey("parametric_fit")]
    result = dg.materialize(assets, selection=["parametric_fit"], instance=dg.DagsterInstance.ephemeral(),
                            resources=local_resources(str(tmp_path)))
    meta = result.asset_materializations_for_node("parametric_fit")[0].metadata
    assert meta["metric"].value == f"downstream:{TASK_SET}:error"
    report = json.loads((tmp_path / "scaling" / recipe.name / "fits" / "parametric" / "parametric.json").read_text())
    held = heldout_run(recipe)  # an extrapolation to the held-out budget: the law fitted is the planted one
    assert law_from_report(report).loss(held.N, held.D) == pytest.approx(LAW.loss(held.N, held.D) - OFFSET, rel=0.05)


def test_a_loss_metric_adds_no_evaluation_dependency():
    fit = next(a for a in build_defs(fixture_recipe()).assets if dg.AssetKey("parametric_fit") in a.keys)
    assert dg.AssetKey("scaling_downstream_eval") not in fit.asset_deps[dg.AssetKey("parametric_fit")]


def test_the_heldout_check_reads_the_heldout_runs_evaluation(tmp_path):
    from marin_assets.scaling.observations import metric_value
    from marin_assets.scaling.suite_observations import attach_downstream

    st = StorageResource(root_uri=str(tmp_path)).storage
    metric = f"downstream:{TASK_SET}:nll"
    observed = {"run": "C1e12__d64l1", "final_eval_loss": 3.0}
    attach_downstream(st, "fixture_suite", [observed], metric, run_key="heldout")
    assert metric_value(observed, metric) is None  # not evaluated yet: no value, so the check cannot pass
    _write_eval(st, "fixture_suite", "heldout", 0.8)
    attach_downstream(st, "fixture_suite", [observed], metric, run_key="heldout")
    assert metric_value(observed, metric) == pytest.approx(2.4)
