"""The scaling stage's Definitions, built from the suite recipe ($MARIN_SCALING_RECIPE, default
recipes/scaling/cpu_suite.yaml) plus every registered external suite (recipes/scaling/external/*.yaml,
under the key prefix of its name). `build_defs(recipe)` lets tests build the same graph over their own suite."""

from __future__ import annotations

import dagster as dg

from marin_assets.defs.scaling.suite_assets import build_scaling_assets
from marin_assets.defs.scaling.fit_checks import build_fit_checks, build_scaling_checks
from marin_assets.scaling.external import ExternalSuiteRecipe, external_recipes_or_errors
from marin_assets.defs.scaling.external_assets import broken_suite_asset, build_external_assets, build_heldout_check
from marin_assets.scaling.suite import ScalingRecipe, default_recipe_path, load_scaling_recipe


def build_defs(recipe: ScalingRecipe, externals: list[ExternalSuiteRecipe] = (),
               broken: dict[str, str] | None = None) -> dg.Definitions:
    """`broken`: {file stem: error} of external suite recipes that did not load (an error asset each)."""
    assets, checks = build_scaling_assets(recipe), build_scaling_checks(recipe)
    for ext in externals:
        assets += build_external_assets(ext)
        checks += build_fit_checks(ext.name, ext.fit, key_prefix=[ext.name],
                                   isoflop_approach="isoflop" in ext.approaches)
        checks += [build_heldout_check(ext)] if ext.heldout else []
    assets += [broken_suite_asset(stem, message) for stem, message in (broken or {}).items()]
    return dg.Definitions(assets=assets, asset_checks=checks)


def build_stage_defs() -> dg.Definitions:
    """The stage over the suite recipe and the external suites, read when the stage loads."""
    return build_defs(load_scaling_recipe(default_recipe_path()), *external_recipes_or_errors())
