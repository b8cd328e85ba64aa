"""The scaling stage's Definitions, built from the suite recipe ($MARIN_SCALING_RECIPE, default
recipes/scaling/cpu_suite.yaml). `build_defs(recipe)` lets tests build the same graph over their own suite."""

from __future__ import annotations

import dagster as dg

from marin_assets.scaling.assets import build_scaling_assets
from marin_assets.scaling.checks import build_scaling_checks
from marin_assets.scaling.suite import ScalingRecipe, default_recipe_path, load_scaling_recipe


def build_defs(recipe: ScalingRecipe) -> dg.Definitions:
    return dg.Definitions(assets=build_scaling_assets(recipe), asset_checks=build_scaling_checks(recipe))


defs = build_defs(load_scaling_recipe(default_recipe_path()))
