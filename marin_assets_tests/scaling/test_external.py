"""The shipped external suite (Besiroglu et al.'s Chinchilla table) fitted by a real materialization,
and the table's guards (registered hash, named columns)."""

import json

import dagster as dg
import pytest

from marin_assets.scaling import external
from marin_assets.defs.scaling.fit_checks import build_fit_checks
from marin_assets.defs.scaling.external_assets import build_external_assets
from marin_assets_tests.local_resources import local_resources
from marin_assets_tests.scaling.chinchilla import CSV, PUBLISHED

RECIPE = "scaling/external/besiroglu2024.yaml"


def test_the_shipped_table_is_the_test_datas_copy():
    recipe = external.load_external_recipe(RECIPE)
    assert external.table_path(recipe).read_bytes() == CSV.read_bytes()
    assert [r.name for r in external.external_recipes()] == ["besiroglu2024"]


def test_an_edited_table_or_a_missing_column_is_refused(tmp_path):
    recipe = external.load_external_recipe(RECIPE)
    edited = tmp_path / "edited.csv"
    edited.write_text(CSV.read_text().replace("5.005581996196243", "4.9"))
    with pytest.raises(external.ExternalTableError, match="the recipe registers 1934"):
        external.read_table(recipe.model_copy(update={"table": str(edited)}))
    renamed = recipe.model_copy(update={"sha256": None, "columns": recipe.columns.model_copy(update={"N": "params"})})
    with pytest.raises(external.ExternalTableError, match=r"lacks columns \['params'\]"):
        external.read_table(renamed)


def test_fit_metric_of_an_external_suite_is_its_loss_or_a_listed_column():
    raw = external.load_external_recipe(RECIPE).model_dump(mode="json")
    with pytest.raises(ValueError, match=r"fit.metric 'bpb' is not final_eval_loss or one of columns.metrics \[\]"):
        external.ExternalSuiteRecipe.model_validate({**raw, "fit": {**raw["fit"], "metric": "bpb"}})
    raw["columns"]["metrics"] = ["bpb_c4"]
    assert external.ExternalSuiteRecipe.model_validate({**raw, "fit": {**raw["fit"], "metric": "bpb_c4"}})


@pytest.mark.slow
def test_besiroglu_suite_fits_by_materialization(tmp_path):
    recipe = external.load_external_recipe(RECIPE)
    assets = build_external_assets(recipe)
    checks = build_fit_checks(recipe.name, recipe.fit, key_prefix=[recipe.name])
    (tmp_path / "dagster").mkdir()
    with dg.DagsterInstance.local_temp(str(tmp_path / "dagster")) as instance:
        result = dg.materialize([*assets, *checks], instance=instance,
                                resources=local_resources(str(tmp_path / "storage")))
    assert result.success
    runs = result.asset_materializations_for_node("besiroglu2024__external_runs")[0].metadata
    assert runs["n_rows"].value == 245 and runs["n_usable"].value == 240 and runs["n_excluded"].value == 5
    par = result.asset_materializations_for_node("besiroglu2024__parametric_fit")[0].metadata
    fitted = {r.data["parameter"]: r.data for r in par["parameters"].value.records}  # a table, 4 figures
    for name, published in PUBLISHED.items():
        assert fitted[name]["value"] == pytest.approx(published, rel=0.01), name
    report = json.loads((tmp_path / "storage/scaling/besiroglu2024/fits/parametric/parametric.json").read_text())
    assert fitted["E"]["value"] == float(f"{report['E']:.4g}") != report["E"]  # every digit stays in the report
    assert "held_out_runs" in par["leave_one_budget_out"].value
    base = tmp_path / "storage" / "scaling" / "besiroglu2024"
    iso = json.loads((base / "fits/isoflop/isoflop.json").read_text())
    assert iso["loss_opt_law"]["irreducible"] and abs(iso["lobo_largest_budget_loss_error"]) < 0.02
    predictions = json.loads((base / "predictions/predictions.json").read_text())["targets"]
    assert all(t["loss_isoflop"] > 0 and t["N_opt"] > 0 for t in predictions)
    outcomes = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert set(outcomes) == {"isoflop_minima_bracketed", "isoflop_leave_one_budget_out",
                             "parametric_leave_one_budget_out"}
    assert outcomes["isoflop_leave_one_budget_out"]  # Approach 2 predicts its largest held-out minimum within 2%
    assert not outcomes["isoflop_minima_bracketed"]  # binned Figure-4 points: some bins have no minimum


def _export(tmp_path, rows: list[dict], **changes) -> external.ExternalSuiteRecipe:
    """A raw tracker export: slash-named columns, compute in GFLOPs."""
    import pandas as pd

    path = tmp_path / "export.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    raw = {"kind": "external", "name": "export", "citation": "a tracker export", "table": str(path),
           "columns": {"name": "run", "N": "params", "D": "tokens", "C": "throughput/total_gflops",
                       "loss": "eval/paloma/macro_loss"}, "scale": {"C": 1e9}, **changes}
    return external.ExternalSuiteRecipe.model_validate(raw)


EXPORT = [{"run": "a", "params": 1e8, "tokens": 2e9, "throughput/total_gflops": 6 * 1e8 * 2e9 / 1e9,
           "eval/paloma/macro_loss": 3.1},
          {"run": "b", "params": 2e9, "tokens": 4e10, "throughput/total_gflops": 8 * 2e9 * 4e10 / 1e9,  # 8ND, not 6ND
           "eval/paloma/macro_loss": 2.5}]


def test_a_raw_export_is_mapped_scaled_filtered_and_its_compute_definition_checked(tmp_path):
    recipe = _export(tmp_path, EXPORT, where="params < 1e9")
    table, _ = external.read_table(recipe)
    rows = external.table_results(recipe, table)
    assert rows[0]["C"] == pytest.approx(6 * 1e8 * 2e9) and rows[0]["final_eval_loss"] == 3.1  # GFLOPs -> FLOPs
    assert rows[0]["status"] == "succeeded" and rows[1]["status"] == "filtered out by the recipe: where params < 1e9"
    definition, warnings = external.compute_definition(recipe, rows)
    assert definition == "given" and warnings == []  # the filtered row is not checked
    unfiltered = external.table_results(recipe.model_copy(update={"where": None}), table)
    _, warnings = external.compute_definition(recipe, unfiltered)
    assert len(warnings) == 1 and warnings[0].startswith("b: given C 6.4e+20 and 6ND 4.8e+20 differ by -25.0%")
    no_c = recipe.model_copy(update={"columns": recipe.columns.model_copy(update={"C": None})})
    assert external.compute_definition(no_c, unfiltered)[0] == "6ND (the table has no C column)"


@pytest.mark.parametrize("changes, match", [
    ({"where": "params <"}, r"where 'params <' cannot be evaluated"),
    ({"where": "widgets > 3"}, r"where 'widgets > 3' cannot be evaluated"),
    ({"where": "params * 2"}, r"is not a true/false condition per row"),
])
def test_a_bad_row_filter_is_refused_naming_it(tmp_path, changes, match):
    recipe = _export(tmp_path, EXPORT, **changes)
    with pytest.raises(external.ExternalTableError, match=match):
        external.table_results(recipe, external.read_table(recipe)[0])


def test_a_scale_of_an_unknown_quantity_is_refused_naming_the_field(tmp_path):
    with pytest.raises(ValueError, match=r"scale names \['flops'\], not a quantity"):
        _export(tmp_path, EXPORT, scale={"flops": 1e9})
    with pytest.raises(ValueError, match=r"scale of \['C'\] must be a positive finite number"):
        _export(tmp_path, EXPORT, scale={"C": 0})
