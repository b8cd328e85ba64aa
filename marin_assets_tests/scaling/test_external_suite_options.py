"""An external suite's recipe options: held-out rows predicted and scored by the held-out asset and check,
Approach 2 left out for a table that is not an isoFLOP grid, the policy for rows repeated over
(N, D, loss), a table without a C column, and one broken suite recipe disabling only that suite."""

import json
import shutil
from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd
import pytest

from marin_assets.core.recipes import RecipeError
from marin_assets.scaling import external
from marin_assets.defs.scaling.fit_checks import build_fit_checks
from marin_assets.defs.scaling.external_assets import broken_suite_asset, build_external_assets, build_heldout_check
from marin_assets_tests.local_resources import local_resources

PACKAGE = Path(__file__).resolve().parents[2] / "marin_assets"
LAW = {"E": 1.8, "A": 400.0, "alpha": 0.34, "B": 2000.0, "beta": 0.37}


def law_loss(N, D):
    return LAW["E"] + LAW["A"] / N ** LAW["alpha"] + LAW["B"] / D ** LAW["beta"]


def table(tmp_path, heldout_shift=0.0, with_c=True) -> Path:
    """Runs on an irregular (N, D) scatter, not an isoFLOP grid, following LAW with 0.3% noise; the three
    largest models (N >= 2e9) are the ones a recipe holds out, `heldout_shift` moves their losses."""
    rng = np.random.default_rng(0)
    N = np.exp(rng.uniform(np.log(5e7), np.log(1e9), 40)).tolist() + [2e9, 3e9, 4e9]
    D = [n * rng.uniform(5, 60) for n in N]
    loss = [law_loss(n, d) * (1 + rng.normal(0, 0.003)) for n, d in zip(N, D)]
    loss = [v * (1 + heldout_shift) if n >= 2e9 else v for n, v in zip(N, loss)]
    frame = pd.DataFrame({"run": [f"r{i:02d}" for i in range(len(N))], "N": N, "D": D, "loss": loss})
    if with_c:
        frame["C"] = 6 * frame["N"] * frame["D"]
    path = tmp_path / "runs.csv"
    frame.to_csv(path, index=False)
    return path


def recipe(path, **changes) -> external.ExternalSuiteRecipe:
    raw = {"kind": "external", "name": "scatter", "citation": "synthetic", "table": str(path),
           "columns": {"name": "run"}, "fit": {"bootstrap": 30, "compare_laws": False}, **changes}
    return external.ExternalSuiteRecipe.model_validate(raw)


def materialize(tmp_path, rec):
    assets = build_external_assets(rec)
    checks = build_fit_checks(rec.name, rec.fit, key_prefix=[rec.name], isoflop_approach="isoflop" in rec.approaches)
    checks += [build_heldout_check(rec)] if rec.heldout else []
    with dg.DagsterInstance.ephemeral() as instance:
        return assets, dg.materialize([*assets, *checks], instance=instance, raise_on_error=False,
                                      resources=local_resources(str(tmp_path / "storage")))


@pytest.mark.slow
def test_heldout_rows_are_predicted_and_scored_without_approach_2(tmp_path):
    rec = recipe(table(tmp_path), heldout="N >= 2e9", approaches=["parametric"])
    assets, result = materialize(tmp_path, rec)
    assert result.success
    assert {a.key.path[-1] for a in assets} == {"external_runs", "parametric_fit", "scaling_predictions",
                                                 "heldout_prediction"}  # no isoflop_fit
    runs = result.asset_materializations_for_node("scatter__external_runs")[0].metadata
    assert runs["n_usable"].value == 40 and "held out by the recipe: heldout N >= 2e9" in runs["excluded_rows"].value
    held = result.asset_materializations_for_node("scatter__heldout_prediction")[0].metadata
    assert held["heldout_rows"].value == 3 and held["heldout_max_abs_relative_error"].value < 0.02
    stored = json.loads((tmp_path / "storage/scaling/scatter/heldout/prediction/prediction.json").read_text())
    for row in stored["rows"]:  # an independent reference: the law the table was drawn from
        assert row["predicted"] == pytest.approx(law_loss(row["N"], row["D"]), rel=0.02)
        assert row["interval"][0] <= row["predicted"] <= row["interval"][1]
    outcomes = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert outcomes["heldout_prediction_error"] and not any(name.startswith("isoflop") for name in outcomes)

    # the failing case: held-out rows 10% above the law the other rows follow
    _, shifted = materialize(tmp_path / "shifted", recipe(table(tmp_path, heldout_shift=0.10), heldout="N >= 2e9",
                                                          approaches=["parametric"]))
    [check] = [e for e in shifted.get_asset_check_evaluations() if e.check_name == "heldout_prediction_error"]
    assert not check.passed and "0 of 3 held-out rows within the 2% target" in check.description


def test_approach_3_cannot_be_left_out_and_a_heldout_selecting_nothing_is_named(tmp_path):
    with pytest.raises(ValueError, match="must include parametric"):
        recipe(table(tmp_path), approaches=["isoflop"])
    rows = external.table_results(rec := recipe(table(tmp_path), heldout="N > 1e12"), external.read_table(rec)[0])
    assert not any(r["status"].startswith(external.HELD_OUT) for r in rows)
    with pytest.raises(external.ExternalTableError, match="heldout 'widgets > 1' cannot be evaluated"):
        external.table_results(rec := recipe(table(tmp_path), heldout="widgets > 1"), external.read_table(rec)[0])


def test_rows_repeated_over_n_d_loss_are_refused_naming_them_or_one_is_kept(tmp_path):
    path = table(tmp_path)
    frame = pd.read_csv(path)
    frame = pd.concat([frame, frame.iloc[[3, 3, 7]].assign(run=["again_a", "again_b", "again_c"])])
    frame.to_csv(path, index=False)
    refuse = recipe(path)
    with pytest.raises(external.ExternalTableError,
                       match=r"3 rows repeat another row's \(N, D, final_eval_loss\), first rows 'r03' and 'again_a'"):
        external.table_results(refuse, external.read_table(refuse)[0])
    keep = recipe(path, duplicates="keep_one")
    rows = {r["run"]: r["status"] for r in external.table_results(keep, external.read_table(keep)[0])}
    assert rows["r03"] == "succeeded" and rows["again_b"].startswith("repeats row r03 over (N, D, final_eval_loss)")
    assert rows["again_c"].startswith("repeats row r07") and sum(s == "succeeded" for s in rows.values()) == 43
    with pytest.raises(ValueError, match="duplicates"):
        recipe(path, duplicates="sometimes")


def test_a_table_without_a_c_column_needs_no_c_null(tmp_path):
    rec = recipe(table(tmp_path, with_c=False))
    frame, _ = external.read_table(rec)
    rows = external.table_results(rec, frame)
    assert rows[0]["C"] == pytest.approx(6 * rows[0]["N"] * rows[0]["D"])
    assert external.compute_definition(rec, rows, frame)[0] == "6ND (the table has no C column)"
    named = recipe(table(tmp_path, with_c=False), columns={"name": "run", "C": "C"})  # named explicitly: required
    with pytest.raises(external.ExternalTableError, match=r"lacks columns \['C'\]"):
        external.read_table(named)


def test_one_broken_suite_recipe_disables_only_that_suite_in_a_copied_recipes_folder(tmp_path, monkeypatch):
    recipes = tmp_path / "elsewhere" / "recipes"  # MARIN_RECIPES_DIR: a copy, without sample_data beside it
    shutil.copytree(PACKAGE / "recipes", recipes)
    (recipes / "scaling/external/broken.yaml").write_text("kind: external\nname: broken\ncitation: x\ntable: t.csv\n"
                                                          "approaches: [isoflop]\n")
    monkeypatch.setenv("MARIN_RECIPES_DIR", str(recipes))
    loaded, errors = external.external_recipes_or_errors()
    assert [r.name for r in loaded] == ["besiroglu2024"] and list(errors) == ["broken"]
    assert "broken.yaml" in errors["broken"] and "must include parametric" in errors["broken"]
    assert external.read_table(loaded[0])[0].shape[0] == 245  # the copied folder still finds its table
    with pytest.raises(RecipeError, match="broken.yaml"):
        external.external_recipes()
    asset = broken_suite_asset("broken", errors["broken"])
    result = dg.materialize([asset], raise_on_error=False)
    assert not result.success and asset.key == dg.AssetKey(["broken", "external_recipe_error"])


def test_predictions_show_the_refits_range_and_say_when_the_approaches_disagree():
    from marin_assets.scaling.laws import law_from_params
    from marin_assets.scaling.results import predictions_table

    law = law_from_params({"law": "chinchilla", **LAW})
    boot = [law_from_params({"law": "chinchilla", **LAW, "E": LAW["E"] * f, "A": LAW["A"] * f}) for f in (0.97, 1.0, 1.03)]
    lobo = [law_from_params({"law": "chinchilla", **LAW, "A": LAW["A"] * f}) for f in (0.9, 1.1)]
    n_opt, d_opt = law.compute_optimal(1e22)
    agreeing = {"N_opt_coefficient": n_opt / 1e22 ** 0.5, "N_opt_exponent": 0.5,
                "D_opt_coefficient": d_opt / 1e22 ** 0.5, "D_opt_exponent": 0.5}
    table = predictions_table(law, agreeing, [1e22], boot, 0.95, lobo).iloc[0]
    assert table["loss_lobo_lo"] < table["loss"] < table["loss_lobo_hi"]  # A 10% lower / higher: loss moves
    assert table["N_opt_lobo_lo"] < table["N_opt_lobo_hi"] and table["approaches"] == "agree"
    # the failing case: Approach 2 puts N* at 3x Approach 3's, far outside its interval
    far = predictions_table(law, {**agreeing, "N_opt_coefficient": 3 * agreeing["N_opt_coefficient"]}, [1e22], boot,
                            0.95, lobo).iloc[0]
    assert far["approaches"].startswith("disagree: Approach 2's N_opt")
