"""Input validation for the scaling fitters: bad points are a FitError that names them, before any fit.

Without it a NaN loss reached statsmodels (a raw exception, or NaN coefficients reported as
"not_bracketed"), N <= 0 became log(0), the same run counted twice was fitted silently, and a
single budget was reported as "no bracketed minimum". Values may be any real numbers, numpy
scalars (np.float32) included; they are converted to float64 here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


# One FitError for the whole fitter (the law forms raise it too).
from marin_assets.scaling.laws.base import FitError  # noqa: E402



def as_float_column(name: str, values) -> np.ndarray:
    """A 1-d float64 array, or a FitError naming the column when a value is not a number."""
    try:
        return np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError) as exc:
        raise FitError(f"{name} holds a value that is not a number ({exc})") from None


def require_finite_positive(name: str, values: np.ndarray, labels: list[str] | None = None) -> None:
    """NaN, inf and <= 0 each named, with (up to 5 of) the rows that carry them."""
    problems = []
    for what, bad in (("NaN", np.isnan(values)), ("infinite", np.isinf(values)),
                      ("<= 0", np.isfinite(values) & (values <= 0))):
        if bad.any():
            rows = np.flatnonzero(bad)
            where = [labels[i] for i in rows[:5]] if labels else [f"row {i}" for i in rows[:5]]
            problems.append(f"{int(bad.sum())} {what} ({', '.join(where)}{', ...' if len(rows) > 5 else ''})")
    if problems:
        raise FitError(f"{name} has {'; '.join(problems)}; exclude those runs first")


def require_no_duplicate_rows(table: pd.DataFrame, columns: list[str]) -> None:
    """Identical rows are one run counted twice (replicates differ in loss): refuse, naming them."""
    repeated = table[table.duplicated(columns, keep=False)]
    if len(repeated):
        first = repeated.iloc[0]
        count = int((table[columns] == first[columns]).all(axis=1).sum())
        shown = ", ".join(f"{c}={first[c]:.6g}" for c in columns)
        raise FitError(f"{len(repeated)} duplicate rows over {columns}: e.g. {shown} appears {count} times; "
                       "the same run was counted more than once")


def validated_isoflop_points(points: pd.DataFrame, min_budgets: int) -> pd.DataFrame:
    """budget, N, loss as float64, checked; at least `min_budgets` distinct budgets."""
    missing = {"budget", "N", "loss"} - set(points.columns)
    if missing:
        raise FitError(f"isoFLOP points lack columns {sorted(missing)}")
    table = pd.DataFrame({c: as_float_column(c, points[c]) for c in ("budget", "N", "loss")})
    labels = [f"budget={b:.3g} N={n:.3g}" for b, n in zip(table["budget"], table["N"], strict=True)]
    for column in ("budget", "N", "loss"):
        require_finite_positive(column, table[column].to_numpy(), labels)
    # A run is (budget, N) on an isoFLOP grid; binned external runs can share a bin, N and loss and
    # differ in D: those are distinct runs, so D (or C) joins the identity where the points carry it.
    identity = ["budget", "N", "loss"]
    for extra in ("D", "C"):
        if extra in points.columns:
            table[extra] = as_float_column(extra, points[extra])
            identity.append(extra)
    require_no_duplicate_rows(table, identity)
    # a row fitted once for several identical exported rows (external duplicates: weight) counts `weight` times
    table["weight"] = as_float_column("weight", points["weight"]) if "weight" in points.columns else 1.0
    require_finite_positive("weight", table["weight"].to_numpy(), labels)
    table = table[["budget", "N", "loss", "weight"]]
    budgets = sorted(table["budget"].unique())
    if len(budgets) < min_budgets:
        raise FitError(f"isoFLOP fit needs >= {min_budgets} compute budgets, got {len(budgets)} "
                       f"({', '.join(f'{b:.3g}' for b in budgets) or 'no points'}); add runs at another budget")
    return table


def validated_parametric_points(N, D, L, min_points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    N, D, L = as_float_column("N", N), as_float_column("D", D), as_float_column("loss", L)
    if not (len(N) == len(D) == len(L)):
        raise FitError(f"N, D and loss differ in length: {len(N)}, {len(D)}, {len(L)}")
    if len(N) < min_points:
        raise FitError(f"Approach 3 needs at least {min_points} runs for {min_points} parameters, got {len(N)}")
    labels = [f"N={n:.3g} D={d:.3g}" for n, d in zip(N, D, strict=True)]
    for name, values in (("N", N), ("D", D), ("loss", L)):
        require_finite_positive(name, values, labels)
    require_no_duplicate_rows(pd.DataFrame({"N": N, "D": D, "loss": L}), ["N", "D", "loss"])
    return N, D, L
