"""Real Dagster materializations of the fit assets over results committed to a tmp storage root."""

import json
import math

import dagster as dg
import pytest

from marin_assets.resources.storage_resource import StorageResource
from marin_assets.defs.scaling.definitions import build_defs
from marin_assets.defs.scaling.heldout_assets import heldout_run_parts
from marin_assets.scaling.suite import heldout_run, suite_runs
from marin_assets_tests.scaling.suite_fixture import LAW, fixture_recipe, synthetic_loss, write_result
from marin_assets_tests.local_resources import local_resources

FITS = ["isoflop_fit", "parametric_fit", "scaling_predictions"]


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    root = tmp_path_factory.mktemp("storage")
    recipe = fixture_recipe()
    storage = StorageResource(root_uri=str(root))
    runs = suite_runs(recipe)
    pending = runs[3]  # "has not landed yet": the largest size of the smallest budget, so it stays bracketed
    for run in runs:
        if run is not pending:
            write_result(storage.storage, recipe.name, run, synthetic_loss(run))
    defs = build_defs(recipe)
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
    assets = [*defs.assets, mixture]
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(assets, selection=FITS + ["heldout_prediction"], instance=instance,
                            resources=local_resources(storage.root_uri))
    return {"root": root, "recipe": recipe, "storage": storage, "runs": runs, "pending": pending, "defs": defs, "assets": assets,
            "instance": instance, "result": result}


def _meta(result, asset):
    return result.asset_materializations_for_node(asset)[0].metadata


def _parameters(metadata) -> dict[str, dict]:
    table = metadata["parameters"].value
    assert [c.name for c in table.schema.columns] == ["parameter", "value", "low", "high"]
    return {r.data["parameter"]: r.data for r in table.records}


def test_fits_materialize_with_plots_tables_and_warnings(suite):
    result, root = suite["result"], suite["root"]
    assert result.success
    iso = _meta(result, "isoflop_fit")
    assert iso["usable_budgets"].value == 3
    iso_params = _parameters(iso)
    assert iso_params["N_opt_exponent"]["value"] == pytest.approx(0.5, abs=0.06)  # alpha = beta
    low, high = iso_params["N_opt_exponent"]["low"], iso_params["N_opt_exponent"]["high"]
    assert low < iso_params["N_opt_exponent"]["value"] < high
    assert "1 planned runs have no result yet: C3e10__d32l1" in iso["warnings"].value
    assert iso["isoflop_curves"].value.startswith("![isoflop_curves](data:image/png;base64,")
    par = _meta(result, "parametric_fit")
    # 11 runs pin down the loss surface, not each of E, A, alpha separately; the residuals say it fits.
    assert par["max_abs_relative_residual"].value < 0.01
    params = _parameters(par)  # one row per parameter: 4 significant figures and the bootstrap interval
    assert set(params) == {"E", "A", "B", "alpha", "beta"} and not {"E", "alpha"} & set(par)
    assert all(p["low"] <= p["high"] for p in params.values())
    full = json.loads((root / "scaling/fixture_suite/fits/parametric/parametric.json").read_text())
    assert params["alpha"]["value"] == float(f"{full['alpha']:.4g}")
    base = root / "scaling" / "fixture_suite"
    for rel in ["fits/isoflop/isoflop_curves.png", "fits/isoflop/minima.parquet", "fits/parametric/bootstrap.parquet",
                "fits/parametric/fit_vs_observed.png", "predictions/predictions.parquet",
                "predictions/optimal_allocation.png"]:
        assert (base / rel).stat().st_size > 0, rel
    targets = json.loads((base / "predictions" / "predictions.json").read_text())["targets"]
    assert [t["C"] for t in targets] == [3e12, 3e13, 3e14]
    for t in targets:
        assert t["loss_lo"] <= t["loss"] <= t["loss_hi"] and t["N_opt_lo"] < t["N_opt_hi"]
    shown = _meta(result, "scaling_predictions")["predictions"]  # a typed table, 4 significant figures
    assert isinstance(shown, dg.TableMetadataValue) and [r.data["C"] for r in shown.records] == [3e12, 3e13, 3e14]
    assert shown.records[0].data["loss"] == float(f"{targets[0]['loss']:.4g}")
    n_true, _ = LAW.compute_optimal(targets[0]["C"])  # 10x: close; 1000x from 11 runs is only indicative
    assert targets[0]["N_opt"] == pytest.approx(n_true, rel=0.5)
    assert targets[0]["N_opt_isoflop"] == pytest.approx(n_true, rel=0.3)


def test_preregistered_heldout_prediction_then_check(suite):
    root, storage, recipe = suite["root"], suite["storage"], suite["recipe"]
    prediction = json.loads((root / "scaling/fixture_suite/heldout/prediction/prediction.json").read_text())
    assert prediction["registered_at"] and len(prediction["parametric_fit_data_version"]) == 64
    held = heldout_run(recipe)
    observed = synthetic_loss(held)
    write_result(storage.storage, recipe.name, held, observed, parts=heldout_run_parts(recipe.name),
                 started_at="2999-01-01T00:00:00+00:00")
    check = suite["defs"].get_asset_checks_def(dg.AssetCheckKey(dg.AssetKey("heldout_run"), "heldout_prediction_error"))
    result = dg.materialize([*suite["assets"], check], selection=dg.AssetSelection.checks(check),
                            resources=local_resources(storage.root_uri))
    evaluation = result.get_asset_check_evaluations()[0]
    assert evaluation.passed
    meta = evaluation.metadata
    assert meta["predicted_loss"].value == pytest.approx(prediction["predicted_loss"])
    assert meta["observed_loss"].value == pytest.approx(observed)
    assert abs(meta["relative_error"].value) <= 0.02
    assert "within the 2% target" in evaluation.description

    # Once the held-out run exists, a new "prediction" would not be preregistered: refused.
    again = dg.materialize(suite["assets"], selection=["heldout_prediction"], resources=local_resources(storage.root_uri),
                           raise_on_error=False)
    assert not again.success
    failure = next(e for e in again.all_events if e.is_step_failure)
    assert "would not be preregistered" in str(failure.event_specific_data.error)


def test_bad_runs_are_excluded_with_reasons_in_metadata(tmp_path):
    recipe = fixture_recipe()
    storage = StorageResource(root_uri=str(tmp_path))
    runs = suite_runs(recipe)
    for run in runs:
        write_result(storage.storage, recipe.name, run, synthetic_loss(run))
    write_result(storage.storage, recipe.name, runs[0], math.nan)
    write_result(storage.storage, recipe.name, runs[5], 50.0, vocab_size=1024)
    defs = build_defs(recipe)
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
    result = dg.materialize([*defs.assets, mixture], selection=["parametric_fit"], resources=local_resources(storage.root_uri))
    meta = _meta(result, "parametric_fit")
    assert meta["n_runs"].value == len(runs) - 2 and meta["n_excluded"].value == 2
    assert "C3e10__d12l1: final_eval_loss is nan" in meta["excluded_runs"].value
    assert f"{runs[5].key}: diverged" in meta["excluded_runs"].value


def test_a_landed_run_requests_the_fits_but_never_training(suite):
    instance = suite["instance"]
    defs = dg.Definitions(assets=suite["assets"], resources=local_resources(suite["storage"].root_uri))
    settled = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    first = suite["pending"]
    write_result(suite["storage"].storage, suite["recipe"].name, first, synthetic_loss(first))
    instance.report_runless_asset_event(dg.AssetMaterialization("scaling_run", partition=first.key))
    after = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=settled.cursor)
    requested = {name for name in ("isoflop_fit", "parametric_fit", "scaling_predictions", "scaling_run",
                                   "heldout_prediction", "heldout_run")
                 if after.get_num_requested(dg.AssetKey(name))}
    assert {"isoflop_fit", "parametric_fit"} <= requested
    assert not requested & {"scaling_run", "heldout_run", "heldout_prediction"}


def test_a_previous_recipes_heldout_run_does_not_block_a_new_prediction(tmp_path):
    """The folder holds the held-out run of an earlier recipe: the new held-out run is still unseen."""
    recipe = fixture_recipe()
    storage = StorageResource(root_uri=str(tmp_path))
    for run in suite_runs(recipe):
        write_result(storage.storage, recipe.name, run, synthetic_loss(run))
    old = heldout_run(fixture_recipe(heldout={"flops": 2e12, "size": "d64l1"}))
    write_result(storage.storage, recipe.name, old, synthetic_loss(old), parts=heldout_run_parts(recipe.name))
    defs = build_defs(recipe)
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
    result = dg.materialize([*defs.assets, mixture], selection=["parametric_fit", "heldout_prediction"],
                            resources=local_resources(storage.root_uri))
    assert result.success
    prediction = json.loads((tmp_path / "scaling/fixture_suite/heldout/prediction/prediction.json").read_text())
    assert prediction["run"] == heldout_run(recipe).key != old.key


def test_isoflop_minima_bracketed_fails_naming_the_budget(tmp_path):
    recipe = fixture_recipe()
    storage = StorageResource(root_uri=str(tmp_path))
    runs = suite_runs(recipe)
    smallest = min(r.describe()["budget"] for r in runs)
    first = sorted((r for r in runs if r.describe()["budget"] == smallest), key=lambda r: r.describe()["N"])
    for run in runs:
        write_result(storage.storage, recipe.name, run, synthetic_loss(run))
    for rank, run in enumerate(first):  # loss keeps falling with N: the grid stops before the minimum
        write_result(storage.storage, recipe.name, run, 5.0 - 0.1 * rank)
    defs = build_defs(recipe)
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
    check = defs.get_asset_checks_def(dg.AssetCheckKey(dg.AssetKey("isoflop_fit"), "isoflop_minima_bracketed"))
    result = dg.materialize([*defs.assets, mixture, check], selection=dg.AssetSelection.assets("isoflop_fit")
                            | dg.AssetSelection.checks(check), resources=local_resources(storage.root_uri))
    [evaluation] = result.get_asset_check_evaluations()
    assert not evaluation.passed
    assert evaluation.description.startswith(f"1 of 3 budgets excluded from the power laws: budget {smallest:.3g}: "
                                             "minimum not bracketed (best run is the largest model")
    assert evaluation.description.endswith("extend the grid") and evaluation.metadata["usable_budgets"].value == 2


@pytest.mark.parametrize("observed_factor, started_at, message", [
    (1.10, "2999-01-01T00:00:00+00:00", r"predicted final_eval_loss \d\.\d{4}, observed \d\.\d{4}: relative error -9\.\d\d% exceeds the 2% target"),
    (1.00, "2000-01-01T00:00:00+00:00", r"not preregistered: the prediction was registered at .*, after the held-out run "
                                        r"started at 2000-01-01T00:00:00\+00:00"),
])
def test_heldout_prediction_error_fails_with_the_reason(suite, tmp_path, observed_factor, started_at, message):
    import re
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(suite["root"], root)
    storage, recipe = StorageResource(root_uri=str(root)), suite["recipe"]
    prediction = json.loads((root / "scaling/fixture_suite/heldout/prediction/prediction.json").read_text())
    held = heldout_run(recipe)
    write_result(storage.storage, recipe.name, held, prediction["predicted_loss"] * observed_factor,
                 parts=heldout_run_parts(recipe.name), started_at=started_at)
    check = suite["defs"].get_asset_checks_def(dg.AssetCheckKey(dg.AssetKey("heldout_run"), "heldout_prediction_error"))
    result = dg.materialize([*suite["assets"], check], selection=dg.AssetSelection.checks(check),
                            resources=local_resources(str(root)))
    [evaluation] = result.get_asset_check_evaluations()
    assert not evaluation.passed and re.fullmatch(message, evaluation.description), evaluation.description


def _heldout_check(suite, tmp_path, metric: str, prediction_edit: dict, observed: dict):
    """heldout_prediction_error of the suite's recipe with fit.metric = `metric`, on a copy of its storage."""
    import shutil

    from marin_assets.defs.scaling.fit_checks import build_scaling_checks

    root = tmp_path / "copy"
    shutil.copytree(suite["root"], root)
    recipe = suite["recipe"].model_copy(update={"fit": suite["recipe"].fit.model_copy(update={"metric": metric})})
    path = root / "scaling/fixture_suite/heldout/prediction/prediction.json"
    prediction = {**json.loads(path.read_text()), **prediction_edit}
    path.write_text(json.dumps(prediction))
    held = heldout_run(recipe)
    write_result(StorageResource(root_uri=str(root)).storage, recipe.name, held, prediction["predicted_loss"] * 1.10,
                 parts=heldout_run_parts(recipe.name), started_at="2999-01-01T00:00:00+00:00",
                 **observed)
    [check] = [c for c in build_scaling_checks(recipe) if "heldout_prediction_error" in str(c.check_keys)]
    result = dg.materialize([*suite["assets"], check], selection=dg.AssetSelection.checks(check),
                            resources=local_resources(str(root)))
    [evaluation] = result.get_asset_check_evaluations()
    return prediction, evaluation


def test_heldout_prediction_error_compares_the_metric_the_fit_used(suite, tmp_path):
    """fit.metric bpb: the prediction (of bpb) is compared with the run's bpb, not its final_eval_loss."""
    predicted = json.loads((suite["root"] / "scaling/fixture_suite/heldout/prediction/prediction.json").read_text())
    _, evaluation = _heldout_check(suite, tmp_path, "bpb", {"metric": "bpb"},
                                   {"metrics": {"bpb": predicted["predicted_loss"] * 1.001}})
    assert evaluation.passed, evaluation.description  # final_eval_loss is 10% off; bpb is 0.1% off
    assert evaluation.description.startswith("predicted bpb ") and evaluation.metadata["metric"].value == "bpb"


@pytest.mark.parametrize("edit, message", [
    ({"metric": "final_eval_loss"}, "the committed prediction is of 'final_eval_loss', the fit's metric is 'bpb'"),
    ({"metric": "bpb", "run": "C1e+99__other"}, "the committed prediction is for run 'C1e+99__other', not "),
])
def test_a_prediction_for_another_run_or_metric_fails_the_check(suite, tmp_path, edit, message):
    predicted = json.loads((suite["root"] / "scaling/fixture_suite/heldout/prediction/prediction.json").read_text())
    _, evaluation = _heldout_check(suite, tmp_path, "bpb", edit, {"metrics": {"bpb": predicted["predicted_loss"]}})
    assert not evaluation.passed and evaluation.description.startswith(message), evaluation.description


def test_heldout_run_refuses_a_prediction_for_another_run_or_metric():
    from marin_assets.defs.scaling.heldout_assets import prediction_mismatch

    assert prediction_mismatch({"run": "a", "metric": "bpb"}, "a", "bpb") is None
    assert prediction_mismatch({"run": "a"}, "a", "final_eval_loss") is None  # recorded before the field: default
    assert "for run 'b', not 'a'" in prediction_mismatch({"run": "b", "metric": "bpb"}, "a", "bpb")
    assert "of 'final_eval_loss', the fit's metric is 'bpb'" in prediction_mismatch({"run": "a"}, "a", "bpb")


def _run_checks(suite, recipe):
    """The fit checks of `recipe` (same suite name, so the same stored fits) evaluated by Dagster."""
    from marin_assets.defs.scaling.fit_checks import build_fit_checks

    checks = build_fit_checks(recipe.name, recipe.fit)
    result = dg.materialize([*suite["assets"], *checks], selection=dg.AssetSelection.checks(*checks),
                            resources=local_resources(suite["storage"].root_uri))
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def test_leave_one_budget_out_and_interval_checks_pass_and_fail(suite):
    par = _meta(suite["result"], "parametric_fit")
    assert "leave_one_budget_out" in par and "law_comparison" in par
    assert "data_constrained | not fitted: no run records U" in par["law_comparison"].value
    lenient = fixture_recipe(fit={**suite["recipe"].fit.model_dump(), "max_interval_ratio": 1e12})
    passed = _run_checks(suite, lenient)
    assert passed["isoflop_leave_one_budget_out"].passed and passed["parametric_leave_one_budget_out"].passed
    assert passed["parametric_intervals_narrow"].passed
    assert passed["parametric_intervals_narrow"].description.startswith("all 5 parameters pinned down")
    strict = fixture_recipe(fit={**suite["recipe"].fit.model_dump(), "lobo_loss_tolerance": 1e-6,
                                 "max_interval_ratio": 1.0001})
    failed = _run_checks(suite, strict)
    for name in ("isoflop_leave_one_budget_out", "parametric_leave_one_budget_out", "parametric_intervals_narrow"):
        assert not failed[name].passed, name
    assert "exceeds the tolerance 0.00%" in failed["parametric_leave_one_budget_out"].metadata["problems"].value
    for kind in ("isoflop", "parametric"):  # read as information about the suite, with what it found
        assert failed[f"{kind}_leave_one_budget_out"].description.startswith("Information, not a failure: refitted")
        assert passed[f"{kind}_leave_one_budget_out"].description.startswith("every left-out budget predicted")
    assert "exceeds the tolerance 0.00%" in failed["parametric_leave_one_budget_out"].description
    assert "wide (> 1.0001x)" in failed["parametric_intervals_narrow"].metadata["wide"].value
    # the first screen reads it as information about the suite, at WARN, not as a broken pipeline
    narrow = failed["parametric_intervals_narrow"]
    assert narrow.severity == dg.AssetCheckSeverity.WARN
    assert narrow.description.startswith("Information, not a failure: this suite does not pin down ")
    assert "limit 1.0001" in narrow.description and "The fitted law is stored" in narrow.description
    intervals = failed["parametric_intervals_narrow"].metadata["intervals"]  # a table, not raw JSON
    assert [c.name for c in intervals.schema.columns] == ["parameter", "lo", "hi", "hi_over_lo"]
    assert all(r.data["hi_over_lo"] > 1.0001 or r.data["hi"] <= r.data["lo"] * 1.0001 for r in intervals.records)


@pytest.mark.slow
def test_the_recipe_selects_the_data_constrained_law_and_chinchilla_is_compared(tmp_path):
    from marin_assets.scaling.laws.data_constrained import DataConstrainedLaw

    truth = DataConstrainedLaw(E=2.0, A=10.0, B=19.2, alpha=0.3, beta=0.3, R_star=3.0, unique_tokens=3e5)
    recipe = fixture_recipe(fit={**fixture_recipe().fit.model_dump(), "law": "data_constrained", "bootstrap": 10})
    storage = StorageResource(root_uri=str(tmp_path))
    for run in suite_runs(recipe):
        write_result(storage.storage, recipe.name, run, float(truth.loss(run.N, run.D)),
                     unique_tokens=min(run.D, truth.unique_tokens))
    defs = build_defs(recipe)
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
    result = dg.materialize([*defs.assets, mixture], selection=["isoflop_fit", "parametric_fit", "scaling_predictions"],
                            resources=local_resources(storage.root_uri))
    meta = _meta(result, "parametric_fit")
    assert meta["law"].value == "data_constrained" and _parameters(meta)["unique_tokens"]["value"] == 3e5
    assert meta["max_abs_relative_residual"].value < 1e-3
    comparison = json.loads((tmp_path / "scaling/fixture_suite/fits/parametric/parametric.json").read_text())["law_comparison"]
    by_law = {row["law"]: row for row in comparison}
    assert by_law["chinchilla"]["status"] == "ok" and by_law["data_constrained"]["selected"]
    assert by_law["data_constrained"]["aic"] < by_law["chinchilla"]["aic"]
    predictions = json.loads((tmp_path / "scaling/fixture_suite/predictions/predictions.json").read_text())
    assert predictions["law"] == "data_constrained" and all(t["loss_lo"] <= t["loss_hi"] for t in predictions["targets"])
