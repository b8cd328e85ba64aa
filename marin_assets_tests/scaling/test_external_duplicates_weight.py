"""duplicates: weight fits a row repeated over (N, D, loss) once with weight = its copies: the same fit as
the copies themselves (parametric), the weighted least squares of the normal equations (isoFLOP parabola),
and not the keep_one fit."""

import numpy as np
import pandas as pd
import pytest

from marin_assets.scaling import external, results
from marin_assets.scaling.fit_settings import FitSettings
from marin_assets.scaling.isoflop import fit_isoflop, fit_parabola
from marin_assets.scaling.observations import collect_observations
from marin_assets.scaling.parametric import fit_parametric
from marin_assets_tests.scaling.test_external_suite_options import recipe, table


def _repeated(tmp_path):
    """The scatter table with row r03 exported three times over and r07 twice (one run each)."""
    path = table(tmp_path)
    frame = pd.read_csv(path)
    frame = pd.concat([frame, frame.iloc[[3, 3, 3, 3, 7]].assign(run=["a", "b", "c", "d", "e"])])
    frame.to_csv(path, index=False)
    return path


def test_repeated_rows_are_fitted_once_with_their_count_as_weight(tmp_path):
    rec = recipe(_repeated(tmp_path), duplicates="weight")
    rows = {r["run"]: r for r in external.table_results(rec, external.read_table(rec)[0])}
    assert rows["r03"]["weight"] == 5 and rows["r07"]["weight"] == 2 and "weight" not in rows["r00"]
    assert rows["c"]["status"].startswith("repeats row r03 over (N, D, final_eval_loss): fitted once in its weight")
    obs = collect_observations(list(rows.values()))
    assert len(obs.table) == 43 and obs.table["weight"].sum() == 43 + 4 + 1

    settings = FitSettings(bootstrap=0, compare_laws=False)
    weighted = results._fit_form(obs.table, settings, "chinchilla").law.as_dict()
    # the reference: the copies as separate runs (a weight is a multiplicity: the same objective, term by term),
    # each copy's loss moved by 1e-12 relative so the fit's input check does not refuse them as one run twice
    copies = obs.table.loc[obs.table.index.repeat(obs.table["weight"].astype(int))]
    apart = copies["loss"] * (1 + 1e-12 * copies.groupby(level=0).cumcount())
    reference = fit_parametric(copies["N"], copies["D"], apart).law.as_dict()
    assert weighted == pytest.approx(reference, rel=1e-4)
    # the failing case: keep_one (each run once, unweighted) is a different fit
    (tmp_path / "k").mkdir()
    keep = recipe(_repeated(tmp_path / "k"), duplicates="keep_one")
    kept = collect_observations(external.table_results(keep, external.read_table(keep)[0]))
    assert kept.table["weight"].eq(1).all()
    once = results._fit_form(kept.table, settings, "chinchilla").law.as_dict()
    assert once != pytest.approx(weighted, rel=1e-4)


def test_the_isoflop_parabola_is_the_weighted_least_squares_of_the_normal_equations():
    N = np.array([1e6, 2e6, 4e6, 8e6, 1.6e7])
    loss = np.array([3.10, 2.95, 2.93, 2.99, 3.12])
    w = np.array([1.0, 3.0, 1.0, 2.0, 1.0])
    x = np.log(N)
    X = np.column_stack([np.ones_like(x), x, x * x])
    by_hand = np.linalg.solve(X.T @ (w[:, None] * X), X.T @ (w * loss))  # (X'WX) b = X'Wy
    assert fit_parabola(N, loss, weights=w) == pytest.approx(tuple(by_hand), rel=1e-9)
    assert fit_parabola(N, loss) != pytest.approx(tuple(by_hand), rel=1e-3)  # the failing case: unweighted
    # robust fit: a weight is that many copies of the row
    assert fit_parabola(N, loss, robust=True, weights=w) == pytest.approx(
        fit_parabola(np.repeat(N, w.astype(int)), np.repeat(loss, w.astype(int)), robust=True), rel=1e-9)
    # through fit_isoflop: each budget's vertex from its weighted parabola
    grid = pd.DataFrame({"budget": [1e15] * 5 + [1e16] * 5, "N": np.tile(N, 2),
                         "loss": np.concatenate([loss, loss - 0.3]), "weight": np.tile(w, 2)})
    fit = fit_isoflop(grid)
    assert fit.budgets[0].coefficients == pytest.approx(tuple(by_hand), rel=1e-9)
    assert fit.budgets[0].N_opt == pytest.approx(np.exp(-by_hand[1] / (2 * by_hand[2])), rel=1e-9)
