"""Each stage's folder under defs/ is one Dagster component, so one bad recipe does not break the code location.

`defs/<stage>/defs.yaml` names `StageDefinitions`; Dagster's defs-folder loader builds it, and it returns what
`build_stage_defs()` of the stage's `defs/<stage>/definitions.py` builds: recipes are read then, never when a module
is imported (marin_assets_tests/core/test_no_recipe_at_import.py). A stage whose recipe fails validation is replaced
by a single `<stage>_recipe_error` asset in the stage's group: the other stages load (and run) as usual, the UI shows
the broken stage with the error as its description, and materializing it fails with that one-line message (file,
field, reason). The message is also logged at load time.
"""

import importlib
import logging

import dagster as dg

from marin_assets.core.recipes import RecipeError

log = logging.getLogger(__name__)


def broken_stage(stage: str, message: str) -> dg.Definitions:
    @dg.asset(name=f"{stage}_recipe_error", group_name=stage, kinds={"python"},
              description=f"Stage {stage!r} did not load: {message}")
    def recipe_error() -> None:
        raise RecipeError(message)

    return dg.Definitions(assets=[recipe_error])


def load_stage(stage: str, module: str) -> dg.Definitions:
    """What `module`'s `build_stage_defs()` builds, or a placeholder that fails with the recipe error."""
    try:
        return importlib.import_module(module).build_stage_defs()
    except RecipeError as exc:
        log.error("stage %s not loaded: %s", stage, exc)
        return broken_stage(stage, str(exc))


class StageDefinitions(dg.Component, dg.Model, dg.Resolvable):
    """One stage folder of defs/: its definitions.py, loaded in isolation (the folder's name is the stage)."""

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        stage = context.path.name
        return load_stage(stage, f"marin_assets.defs.{stage}.definitions")
