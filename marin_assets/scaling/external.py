"""External scaling suites: a registered table of runs trained elsewhere (a paper's points, earlier
results) that feeds the same fit assets as a suite's own runs, so they fit, plot and compare without
training. Recipes: recipes/scaling/external/*.yaml; tables (CSV or Parquet) under the recipes folder.

Each row becomes a run result in the form the suite's result.json has (run, budget, N, D, C,
final_eval_loss, status, optional unique_tokens and metrics), so observations.collect_observations
excludes bad rows with reasons exactly as it does for trained runs. D comes from a tokens column or,
if the table has none, from C = 6 N D. Tables without isoFLOP budgets (Chinchilla's Figure-4 points
are not on a grid) are grouped into log-spaced budget bins, for Approach 2 and leave-one-budget-out.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from marin_assets.core.hashing import sha256_bytes
from marin_assets.core.recipes import Recipe, RecipeError, load_recipe, recipe_path, recipes_dir
from marin_assets.scaling.fit_settings import FLOPS_PER_PARAM_TOKEN, FitSettings

EXTERNAL_DIR = "scaling/external"
STANDARD = ("name", "N", "D", "C", "loss", "budget", "unique_tokens", "source")
SCALABLE = ("N", "D", "C", "loss", "budget", "unique_tokens")
HELD_OUT = "held out by the recipe"


class TableColumns(Recipe):
    """Which column of the table holds each quantity (None: absent)."""

    name: str | None = None
    N: str = "N"
    D: str | None = "D"            # tokens; None (or left unset and no column D): derived as C / (6 N)
    C: str | None = "C"            # None (or left unset and no column C): derived as 6 N D
    loss: str = "loss"
    budget: str | None = None      # isoFLOP budget of the run; None: log-spaced bins of C
    unique_tokens: str | None = None
    source: str | None = None      # per-row citation, else the recipe's
    metrics: list[str] = []        # more metric columns (fit.metric can name one)


class ExternalSuiteRecipe(Recipe):
    kind: Literal["external"]
    name: str
    description: str = ""
    citation: str
    table: str                     # CSV or Parquet, relative to the recipes folder (or absolute)
    sha256: str | None = None      # when set, the table must still have this hash (published numbers)
    columns: TableColumns = TableColumns()
    budget_bins_per_decade: int = Field(default=4, gt=0)
    drop_highest_loss: int = Field(default=0, ge=0)  # e.g. Besiroglu et al. drop the 5 highest-loss runs
    target_multipliers: list[float] = [10, 100, 1000]
    # A raw tracker export: multiply a quantity's column into the units the fits use (e.g. {C: 1e9} for
    # GFLOPs), keep only the rows an expression selects (pandas DataFrame.eval over the table's columns,
    # `back-quoted` when a name has a '/'), and warn when a given C and 6ND disagree by more than c_tolerance.
    scale: dict[str, float] = {}
    where: str | None = None
    c_tolerance: float = Field(default=0.1, gt=0)
    # Rows the fits leave out and the held-out assets predict and score (an expression like `where`).
    heldout: str | None = None
    # Which approaches to fit: Approach 2 (isoflop) needs an isoFLOP grid; Approach 3 (parametric) is
    # what the predictions and the held-out rows use, so it cannot be left out.
    approaches: list[Literal["isoflop", "parametric"]] = Field(default=["isoflop", "parametric"], min_length=1)
    # Rows repeated over (N, D, loss): one run exported twice. refuse (naming the first rows), keep_one,
    # or weight (the first fitted once with weight = the number of identical rows).
    duplicates: Literal["refuse", "keep_one", "weight"] = "refuse"
    fit: FitSettings = FitSettings()

    @model_validator(mode="after")
    def _parametric_is_fitted(self):
        if "parametric" not in self.approaches:
            raise ValueError(f"approaches {self.approaches} must include parametric: the predictions and the "
                             "held-out rows come from Approach 3")
        return self

    @model_validator(mode="after")
    def _scaled_quantities_exist(self):
        unknown = sorted(set(self.scale) - set(SCALABLE) - set(self.columns.metrics))
        if unknown:
            raise ValueError(f"scale names {unknown}, not a quantity of the table ({', '.join(SCALABLE)} "
                             "or one of columns.metrics)")
        bad = sorted(k for k, v in self.scale.items() if not (math.isfinite(v) and v > 0))
        if bad:
            raise ValueError(f"scale of {bad} must be a positive finite number")
        return self

    @model_validator(mode="after")
    def _metric_is_a_column(self):
        # A published table has no per-domain evaluation: fit.metric is its loss or a listed metric column.
        if self.fit.metric not in ("final_eval_loss", *self.columns.metrics):
            raise ValueError(f"fit.metric {self.fit.metric!r} is not final_eval_loss or one of columns.metrics "
                             f"{self.columns.metrics}")
        return self


class ExternalTableError(ValueError):
    pass


def table_path(recipe: ExternalSuiteRecipe) -> Path:
    return recipe_path(recipe.table)


def read_table(recipe: ExternalSuiteRecipe) -> tuple[pd.DataFrame, str]:
    """The raw table and its sha256 (checked against the recipe's, so published numbers stay unedited)."""
    path = table_path(recipe)
    if not path.exists():
        raise ExternalTableError(f"{recipe.name}: table {path} does not exist")
    digest = sha256_bytes(path.read_bytes())
    if recipe.sha256 and digest != recipe.sha256:
        raise ExternalTableError(f"{recipe.name}: {path} has sha256 {digest}, the recipe registers {recipe.sha256}")
    table = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    cols = present_columns(recipe.columns, table)
    named = [c for c in (cols.name, cols.N, cols.D, cols.C, cols.loss, cols.budget, cols.unique_tokens, cols.source,
                         *cols.metrics) if c]
    missing = sorted(set(named) - set(table.columns))
    if missing:
        raise ExternalTableError(f"{recipe.name}: {path} lacks columns {missing} (has {sorted(table.columns)})")
    if cols.D is None and cols.C is None:
        raise ExternalTableError(f"{recipe.name}: the table needs a tokens (D) or a compute (C) column")
    return table, digest


def present_columns(cols: TableColumns, table: pd.DataFrame) -> TableColumns:
    """The columns with D and C dropped when the recipe left them at their default and the table has no
    such column (a table without C needs no `C: null`); a column the recipe names must exist."""
    absent = {q: None for q in ("D", "C") if q not in cols.model_fields_set and getattr(cols, q) not in table.columns}
    return cols.model_copy(update=absent)


def _number(value) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return math.nan
    return value


def budget_bin(C: float, per_decade: int) -> float:
    return float(10 ** (round(math.log10(C) * per_decade) / per_decade)) if C > 0 and math.isfinite(C) else math.nan


def selected_rows(recipe: ExternalSuiteRecipe, table: pd.DataFrame, field: str = "where") -> pd.Series:
    """Which rows the recipe's `field` expression (where, heldout) selects; unset: all rows for where, none for
    heldout. A bad expression is an error naming the recipe field."""
    expression = getattr(recipe, field)
    if not expression:
        return pd.Series(field == "where", index=table.index)
    try:
        keep = table.eval(expression)
    except Exception as exc:  # pandas raises many kinds (SyntaxError, UndefinedVariableError, TypeError)
        raise ExternalTableError(f"{recipe.name}: {field} {expression!r} cannot be evaluated over the table's "
                                 f"columns {sorted(table.columns)}: {type(exc).__name__}: {exc}") from None
    if not isinstance(keep, pd.Series) or keep.dtype != bool:
        raise ExternalTableError(f"{recipe.name}: {field} {expression!r} is not a true/false condition per row")
    return keep


def _scaled(recipe: ExternalSuiteRecipe, quantity: str, value: float) -> float:
    return value * recipe.scale.get(quantity, 1.0)


def compute_definition(recipe: ExternalSuiteRecipe, results: list[dict], table: pd.DataFrame | None = None
                       ) -> tuple[str, list[str]]:
    """How C was defined (given, or 6ND) and a warning per usable row whose given C and 6ND disagree."""
    cols = recipe.columns if table is None else present_columns(recipe.columns, table)
    if cols.C is None:
        return "6ND (the table has no C column)", []
    if cols.D is None:
        return "given (D derived as C / 6N)", []
    warnings = []
    for r in results:
        six_nd = FLOPS_PER_PARAM_TOKEN * r["N"] * r["D"]
        if r["status"] == "succeeded" and r["C"] > 0 and abs(six_nd / r["C"] - 1) > recipe.c_tolerance:
            warnings.append(f"{r['run']}: given C {r['C']:.4g} and 6ND {six_nd:.4g} differ by "
                            f"{six_nd / r['C'] - 1:+.1%} (c_tolerance {recipe.c_tolerance:.0%})")
    return "given", warnings


def table_results(recipe: ExternalSuiteRecipe, table: pd.DataFrame) -> list[dict]:
    """One result.json-shaped dict per row, in row order; unusable rows keep status/values saying why."""
    cols, k = present_columns(recipe.columns, table), FLOPS_PER_PARAM_TOKEN
    keep, held = selected_rows(recipe, table), selected_rows(recipe, table, "heldout")
    losses = pd.to_numeric(table[cols.loss], errors="coerce")
    dropped = set(losses.nlargest(recipe.drop_highest_loss).index) if recipe.drop_highest_loss else set()
    results = []
    for index, row in table.iterrows():
        N, loss = _scaled(recipe, "N", _number(row[cols.N])), _scaled(recipe, "loss", _number(row[cols.loss]))
        D = _scaled(recipe, "D", _number(row[cols.D])) if cols.D else math.nan
        C = _scaled(recipe, "C", _number(row[cols.C])) if cols.C else math.nan
        if cols.D is None:
            D = C / (k * N) if N > 0 else math.nan
        if cols.C is None:
            C = k * N * D
        budget = _scaled(recipe, "budget", _number(row[cols.budget])) if cols.budget else \
            budget_bin(C, recipe.budget_bins_per_decade)
        status = "succeeded"
        if not keep[index]:
            status = f"filtered out by the recipe: where {recipe.where}"
        elif index in dropped:
            status = f"dropped by the recipe: one of the {recipe.drop_highest_loss} highest losses"
        elif held[index]:
            status = f"{HELD_OUT}: heldout {recipe.heldout}"
        result = {
            "run": str(row[cols.name]) if cols.name else f"row{index:04d}", "budget": budget, "N": N, "D": D, "C": C,
            "final_eval_loss": loss if math.isfinite(loss) else None, "status": status,
            "source": str(row[cols.source]) if cols.source else recipe.citation,
            "metrics": {m: _scaled(recipe, m, _number(row[m])) for m in cols.metrics},
        }
        if cols.unique_tokens:
            result["unique_tokens"] = _scaled(recipe, "unique_tokens", _number(row[cols.unique_tokens]))
        results.append(result)
    return apply_duplicates_policy(recipe, results)


def apply_duplicates_policy(recipe: ExternalSuiteRecipe, results: list[dict]) -> list[dict]:
    """Rows still in the fit (or held out) that repeat another's (N, D, fitted value): refused naming the
    first repeated rows, or (duplicates: keep_one) every repeat after the first excluded, naming the kept row,
    or (duplicates: weight) likewise excluded, the kept row fitted once with weight = the number of copies."""
    from marin_assets.scaling.observations import metric_value

    first: dict[tuple, dict] = {}
    repeats = []
    for r in results:
        if r["status"] != "succeeded" and not r["status"].startswith(HELD_OUT):
            continue
        key = (r["N"], r["D"], metric_value(r, recipe.fit.metric))
        if key in first:
            repeats.append((r, first[key]["run"], key))
        else:
            first[key] = r
    if repeats and recipe.duplicates == "refuse":
        r, kept, (N, D, value) = repeats[0]
        raise ExternalTableError(
            f"{recipe.name}: {len(repeats)} rows repeat another row's (N, D, {recipe.fit.metric}), first rows "
            f"{kept!r} and {r['run']!r} (N={N:.6g}, D={D:.6g}, {recipe.fit.metric}={value:.6g}); set duplicates: "
            "keep_one in the recipe to keep the first of each, or duplicates: weight to fit it once weighted by its copies")
    for r, kept, key in repeats:
        if recipe.duplicates == "weight":
            first[key]["weight"] = first[key].get("weight", 1) + 1
            r["status"] = f"repeats row {kept} over (N, D, {recipe.fit.metric}): fitted once in its weight (duplicates: weight)"
        else:
            r["status"] = f"repeats row {kept} over (N, D, {recipe.fit.metric}): kept the first (duplicates: keep_one)"
    return results


def load_external_recipe(path: str | Path) -> ExternalSuiteRecipe:
    return load_recipe(path, ExternalSuiteRecipe)


def external_recipes() -> list[ExternalSuiteRecipe]:
    """Every registered external suite (recipes/scaling/external/*.yaml), by file name; a broken one raises."""
    recipes, errors = external_recipes_or_errors()
    if errors:
        raise RecipeError(next(iter(errors.values())))
    return recipes


def external_recipes_or_errors() -> tuple[list[ExternalSuiteRecipe], dict[str, str]]:
    """The external suites that load, and {file stem: error} for those that do not, so one broken suite
    recipe disables only that suite."""
    folder = recipes_dir() / EXTERNAL_DIR
    recipes, errors = [], {}
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        try:
            recipes.append(load_external_recipe(path))
        except RecipeError as exc:
            errors[path.stem] = str(exc)
    return recipes, errors


def target_budgets(recipe: ExternalSuiteRecipe, results: list[dict]) -> list[float]:
    largest = max((r["budget"] for r in results if np.isfinite(r["budget"])), default=1.0)
    return [largest * m for m in recipe.target_multipliers]
