"""Dense vs MoE comparison: the effective parameter multiplier is recovered from runs built from known laws."""

import pandas as pd
import pytest

from marin_assets.scaling.comparison import compare, comparison_plot_png, dense_equivalent_n
from marin_assets.scaling.laws.chinchilla import ParametricLaw
from marin_assets.scaling.parametric import fit_parametric

DENSE = ParametricLaw(E=1.7, A=400.0, B=1200.0, alpha=0.34, beta=0.28)


def _suite(law, multiplier: float, prefix: str) -> pd.DataFrame:
    rows = []
    for budget in (1e15, 1e16, 1e17):
        for n in (1e5, 3e5, 1e6, 3e6, 1e7):
            d = budget / (6 * n)
            rows.append({"run": f"{prefix}C{budget:g}_{n:g}", "budget": budget, "N": n, "D": d, "C": budget,
                         "loss": float(law.loss(n * multiplier, d))})
    return pd.DataFrame(rows)


def test_a_moe_suite_worth_2x_dense_parameters_measures_2x():
    dense, moe = _suite(DENSE, 1.0, "d"), _suite(DENSE, 2.0, "m")
    out = compare(dense, moe, DENSE)
    assert out["effective_parameter_multiplier"] == pytest.approx(2.0, rel=1e-6)
    assert all(b["moe_minus_dense"] < 0 for b in out["budgets"]) and len(out["budgets"]) == 3
    # a MoE worth no more than its active parameters measures 1x, and is not better at any budget
    same = compare(dense, _suite(DENSE, 1.0, "m"), DENSE)
    assert same["effective_parameter_multiplier"] == pytest.approx(1.0, rel=1e-6)
    assert all(b["moe_minus_dense"] == pytest.approx(0.0) for b in same["budgets"])


def test_with_a_law_fitted_to_the_dense_runs():
    dense, moe = _suite(DENSE, 1.0, "d"), _suite(DENSE, 1.5, "m")
    fitted = fit_parametric(dense["N"], dense["D"], dense["loss"], method="huber").law
    assert compare(dense, moe, fitted)["effective_parameter_multiplier"] == pytest.approx(1.5, rel=0.02)


def test_a_loss_below_the_dense_floor_is_unreachable_not_invented():
    assert dense_equivalent_n(DENSE, 1.6, 1e9) is None  # below E: no dense size gets there
    moe = _suite(DENSE, 1.0, "m")
    moe.loc[0, "loss"] = 1.6
    out = compare(_suite(DENSE, 1.0, "d"), moe, DENSE)
    assert out["unreachable"] == [moe.loc[0, "run"]] and len(out["runs"]) == len(moe) - 1


def test_plot_is_a_png():
    assert comparison_plot_png(_suite(DENSE, 1.0, "d"), _suite(DENSE, 2.0, "m"), "t").startswith(b"\x89PNG")


def test_the_moe_suite_graph_has_the_comparison_and_the_dense_one_does_not():
    from marin_assets.scaling.definitions import build_defs
    from marin_assets.scaling.suite import load_scaling_recipe

    moe = build_defs(load_scaling_recipe("scaling/cpu_moe_suite.yaml"))
    dense = build_defs(load_scaling_recipe("scaling/cpu_suite.yaml"))
    names = lambda defs: {k.to_user_string() for a in defs.assets for k in a.keys}
    assert "scaling_comparison" in names(moe) and "scaling_comparison" not in names(dense)


def test_scaling_comparison_materializes_over_both_suites_results(tmp_path):
    """Real Dagster materialization over committed results: MoE runs whose loss is the fixture law's at 2 N."""
    import dagster as dg
    import yaml

    from marin_assets.resources.storage import StorageResource
    from marin_assets.scaling.definitions import build_defs
    from marin_assets.scaling.suite import suite_runs
    from marin_assets_tests.local_resources import local_resources
    from marin_assets_tests.scaling.suite_fixture import LAW, fixture_recipe, synthetic_loss, write_result

    dense = fixture_recipe()
    dense_path = tmp_path / "dense.yaml"
    dense_path.write_text(yaml.safe_dump(dense.model_dump(mode="json")))
    moe = fixture_recipe(name="fixture_moe", compare_with=str(dense_path))
    storage = StorageResource(root_uri=str(tmp_path / "storage"))
    for run in suite_runs(dense):
        write_result(storage.storage, dense.name, run, synthetic_loss(run))
    for run in suite_runs(moe):
        write_result(storage.storage, moe.name, run, float(LAW.loss(2 * run.N, run.D)))
    defs = build_defs(moe)
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
    result = dg.materialize([*defs.assets, mixture], selection=["scaling_comparison"],
                            resources=local_resources(storage.root_uri))
    assert result.success
    meta = result.asset_materializations_for_node("scaling_comparison")[0].metadata
    assert meta["effective_parameter_multiplier"].value == pytest.approx(2.0, rel=0.1)
    rows = [r.data for r in meta["loss_at_equal_compute"].records]
    assert len(rows) == 3 and all(r["moe_minus_dense"] < 0 for r in rows)
    assert meta["loss_vs_compute"].value.startswith("![loss_vs_compute](data:image/png;base64,")
