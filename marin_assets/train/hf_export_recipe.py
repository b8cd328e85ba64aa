"""The HF export recipe (recipes/hf_export.yaml): the logits check's texts and tolerances, publication, scaling runs."""

from __future__ import annotations

from pydantic import Field

from marin_assets.core.recipes import Recipe, load_recipe
from marin_assets.train.hf_push import PushSettings

HF_EXPORT_RECIPE = "hf_export.yaml"


class HfExportRecipe(Recipe):
    texts: list[str] = Field(min_length=1, description="fixed texts both forward passes score")
    max_abs_diff: float = Field(gt=0, description="largest allowed |logit difference| over every position and token")
    min_top1_agreement: float = Field(ge=0, le=1, description="share of positions whose argmax token must agree")
    push: PushSettings = PushSettings()  # publish each export (Hub repo / gs:// prefix) once its logits match
    scaling_runs: dict[str, list[str]] = Field(
        default_factory=dict, description="scaling suite name -> run keys (C<budget>__<size>) to export too "
        "(asset scaling_hf_export, same folder layout and logits check as hf_export)")


def load_hf_export_recipe() -> HfExportRecipe:
    return load_recipe(HF_EXPORT_RECIPE, HfExportRecipe)
