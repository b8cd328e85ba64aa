"""Dense vs MoE comparison: the effective parameter multiplier is recovered from runs built from known laws,
and a missing or degenerate fit gives no multiplier, saying why."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from marin_assets.scaling.comparison import (SuiteLaw, compare, compute_multiplier, dense_equivalent_n, fit_multiplier,
                                             suite_law)
from marin_assets.scaling.comparison_plot import comparison_plot_png
from marin_assets.scaling.fit_settings import FitSettings
from marin_assets.scaling.laws.chinchilla import ParametricLaw

DENSE = ParametricLaw(E=1.7, A=400.0, B=1200.0, alpha=0.34, beta=0.28)


def _suite(law, multiplier: float, prefix: str, noise: float = 0.0, seed: int = 0) -> pd.DataFrame:
    rng, rows = np.random.default_rng(seed), []
    for budget in (1e15, 1e16, 1e17):
        for n in (1e5, 3e5, 1e6, 3e6, 1e7):
            d = budget / (6 * n)
            loss = float(law.loss(n * multiplier, d)) * float(np.exp(rng.normal(0, noise))) if noise else float(
                law.loss(n * multiplier, d))
            rows.append({"run": f"{prefix}C{budget:g}_{n:g}", "budget": budget, "N": n, "D": d, "C": budget,
                         "loss": loss})
    return pd.DataFrame(rows)


def test_a_moe_suite_worth_2x_dense_parameters_measures_2x():
    dense, moe = _suite(DENSE, 1.0, "d"), _suite(DENSE, 2.0, "m")
    out = compare(dense, moe, SuiteLaw("dense", DENSE))
    assert out["effective_parameter_multiplier"] == pytest.approx(2.0, rel=1e-5)
    assert all(r["multiplier"] == pytest.approx(2.0, rel=1e-6) for r in out["runs"])
    assert all(b["multiplier"] == pytest.approx(2.0, rel=1e-5) for b in out["budgets"])
    # better at every budget, and the dense frontier needs more compute to reach the MoE's best loss
    assert all(b["moe_minus_dense"] < 0 and b["compute_multiplier"] > 1 for b in out["budgets"])
    assert len(out["budgets"]) == 3 and out["multiplier_problem"] is None
    # a MoE worth no more than its active parameters measures 1x, and is not better at any budget
    same = compare(dense, _suite(DENSE, 1.0, "m"), SuiteLaw("dense", DENSE))
    assert same["effective_parameter_multiplier"] == pytest.approx(1.0, rel=1e-5)
    assert all(b["moe_minus_dense"] == pytest.approx(0.0) for b in same["budgets"])


def test_compute_multiplier_is_the_dense_frontiers_compute_at_equal_loss():
    C = 1e16
    loss = float(DENSE.loss(*DENSE.compute_optimal(3 * C)))
    assert compute_multiplier(DENSE, loss, C) == pytest.approx(3.0, rel=1e-6)
    assert compute_multiplier(DENSE, DENSE.E - 0.1, C) is None  # below the floor: no compute gets there


def test_fitted_laws_recover_the_multiplier_with_an_interval_that_covers_it():
    """Noisy suites (0.3% log-normal noise), both laws fitted; the bootstrap interval brackets the truth."""
    dense, moe = _suite(DENSE, 1.0, "d", noise=0.003, seed=1), _suite(DENSE, 1.5, "m", noise=0.003, seed=2)
    fit = FitSettings(method="huber", bootstrap=40)
    dense_law = suite_law("dense", dense, fit, bootstrap=40)
    assert dense_law.problem is None and len(dense_law.bootstrap_laws) >= 30
    out = compare(dense, moe, dense_law, suite_law("moe", moe, fit), level=0.95)
    k, (lo, hi) = out["effective_parameter_multiplier"], out["multiplier_interval"]
    assert k == pytest.approx(1.5, rel=0.15) and lo < 1.5 < hi and lo < k < hi
    assert out["moe_law"] is not None and out["moe_law_problem"] is None
    assert all(b["moe_law_loss_opt"] < b["dense_law_loss_opt"] for b in out["budgets"])
    # without the dense bootstrap there is a point estimate and no interval
    assert compare(dense, moe, replace(dense_law, bootstrap_laws=[]))["multiplier_interval"] is None


def test_a_loss_below_the_dense_floor_is_unreachable_not_invented():
    assert dense_equivalent_n(DENSE, 1.6, 1e9) is None  # below E: no dense size gets there
    moe = _suite(DENSE, 1.0, "m")
    moe.loc[0, "loss"] = 1.6
    out = compare(_suite(DENSE, 1.0, "d"), moe, SuiteLaw("dense", DENSE))
    assert out["unreachable"] == [moe.loc[0, "run"]] and len(out["runs"]) == len(moe) - 1
    # every MoE run below the dense floor: no multiplier fits, and the report says so
    floor = moe.assign(loss=1.5)
    out = compare(_suite(DENSE, 1.0, "d"), floor, SuiteLaw("dense", DENSE))
    assert out["effective_parameter_multiplier"] is None and "search bound" in out["multiplier_problem"]
    assert fit_multiplier(DENSE, floor["N"], floor["D"], floor["loss"]) is None


def test_missing_or_degenerate_dense_fit_gives_no_multiplier_and_says_why():
    fit = FitSettings(method="huber")
    missing = suite_law("cpu_suite", _suite(DENSE, 1.0, "d").iloc[0:0], fit)
    assert missing.law is None and "cpu_suite has no trained runs" in missing.problem
    too_few = suite_law("cpu_suite", _suite(DENSE, 1.0, "d").iloc[:3], fit)
    assert too_few.law is None and "cpu_suite's chinchilla fit failed on 3 runs" in too_few.problem
    flat = SuiteLaw("cpu_suite", ParametricLaw(E=1.7, A=0.0, B=1200.0, alpha=0.34, beta=0.28))
    table = _suite(flat.law, 1.0, "d")
    degenerate = suite_law("cpu_suite", table, fit)
    assert degenerate.law is None and "does not decrease with N" in degenerate.problem
    out = compare(table, _suite(DENSE, 2.0, "m"), missing)
    assert out["effective_parameter_multiplier"] is None and out["runs"] == []
    assert out["multiplier_problem"] == missing.problem and len(out["budgets"]) == 3  # the losses are still compared


def test_plot_is_a_png():
    dense, moe = _suite(DENSE, 1.0, "d"), _suite(DENSE, 2.0, "m")
    assert comparison_plot_png(dense, moe, "t").startswith(b"\x89PNG")
    assert comparison_plot_png(dense, moe, "t", DENSE, DENSE).startswith(b"\x89PNG")


def test_the_moe_suite_graph_has_the_comparison_and_the_dense_one_does_not():
    from marin_assets.defs.scaling.definitions import build_defs
    from marin_assets.scaling.suite import load_scaling_recipe

    moe = build_defs(load_scaling_recipe("scaling/cpu_moe_suite.yaml"))
    dense = build_defs(load_scaling_recipe("scaling/cpu_suite.yaml"))
    names = lambda defs: {k.to_user_string() for a in defs.assets for k in a.keys}
    assert "scaling_comparison" in names(moe) and "scaling_comparison" not in names(dense)


def test_scaling_comparison_materializes_over_both_suites_results(tmp_path):
    """Real Dagster materialization over committed results: MoE runs whose loss is the fixture law's at 2 N."""
    import dagster as dg
    import yaml

    from marin_assets.resources.storage_resource import StorageResource
    from marin_assets.defs.scaling.definitions import build_defs
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
    assert meta["multiplier_lo"].value < 2.0 < meta["multiplier_hi"].value  # the fixture's 40 bootstrap resamples
    assert "95% interval" in meta["multiplier"].value
    rows = [r.data for r in meta["loss_at_equal_compute"].records]
    assert len(rows) == 3 and all(r["moe_minus_dense"] < 0 and r["multiplier"] > 1 for r in rows)
    assert meta["loss_vs_compute"].value.startswith("![loss_vs_compute](data:image/png;base64,")

    # the dense suite's runs gone (another storage): the comparison fails naming the suite and the command
    empty = StorageResource(root_uri=str(tmp_path / "empty"))
    for run in suite_runs(moe):
        write_result(empty.storage, moe.name, run, float(LAW.loss(2 * run.N, run.D)))
    failed = dg.materialize([*defs.assets, mixture], selection=["scaling_comparison"],
                            resources=local_resources(empty.root_uri), raise_on_error=False)
    assert not failed.success
    message = str(failed.get_step_failure_events()[0].event_specific_data.error)
    assert f"{dense.name} has none" in message and f"MARIN_SCALING_RECIPE={dense_path} marin materialize-all" in message
