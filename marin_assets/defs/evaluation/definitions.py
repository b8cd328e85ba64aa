"""The evaluation stage's Definitions: every training run, every run of the scaling suite and its held-out
run, each evaluated on every registered task set (recipes/task_sets.yaml), the task sets' items for
cleaning's decontamination, and the two-step forecast of the held-out run's downstream metrics with its check.

`build_defs(registry, runs, suite)` lets tests build the same assets over their own runs and task sets.
The runs' assets are named by key (training_run, scaling_run, heldout_run), never imported.
"""

from __future__ import annotations

import dagster as dg

from marin_assets.core import layout
from marin_assets.defs.evaluation.downstream_eval_assets import build_eval_asset, task_set_source
from marin_assets.defs.evaluation.forecast_assets import build_forecast_assets
from marin_assets.defs.evaluation.decontamination_assets import build_decontamination_asset
from marin_assets.evaluation.task_sets import TaskSetsRegistry, load_task_sets
from marin_assets.scaling.run_results import output_parts, run_parts
from marin_assets.scaling.suite_observations import evaluation_parts  # where the fits read them back
from marin_assets.scaling.suite import ScalingRecipe, default_recipe_path, heldout_run, load_scaling_recipe, suite_runs
from marin_assets.train.runs import TrainingRuns, load_training_runs

ALL_METRICS = "acc, centred acc, log-prob and normalised probability of the correct answer, bits per byte"


def build_defs(registry: TaskSetsRegistry, runs: TrainingRuns | None = None,
               suite: ScalingRecipe | None = None) -> dg.Definitions:
    task_sets = task_set_source(registry)
    assets: list = [task_sets, build_decontamination_asset(registry)]
    ev = layout.EVALUATION
    if runs is not None and runs.runs:
        assets.append(build_eval_asset(
            "downstream_eval", registry, task_sets, "training_run", sorted(runs.runs),
            lambda run: (layout.TRAINING, run, layout.FINAL_DIR), lambda run, ts: (ev, layout.TRAINING, run, ts),
            f"A training run's final checkpoint on a task set through lm-evaluation-harness ({ALL_METRICS}).",
            local_runs=[n for n in runs.runs if runs.spec(n).resources.launcher == "local"]))
    if suite is not None:
        assets.append(build_eval_asset(
            "scaling_downstream_eval", registry, task_sets, "scaling_run", [r.key for r in suite_runs(suite)],
            lambda key: run_parts(suite.name, key), lambda key, ts: evaluation_parts(suite.name, key, ts),
            f"A {suite.name} suite run on a task set through lm-evaluation-harness ({ALL_METRICS})."))
        if heldout_run(suite) is not None:
            assets.append(build_eval_asset(
                "heldout_downstream_eval", registry, task_sets, "heldout_run", None,
                lambda _: output_parts(suite.name, "heldout", "run"), lambda _, ts: evaluation_parts(suite.name, "heldout", ts),
                f"The {suite.name} suite's held-out run on a task set ({ALL_METRICS}), to check its forecast."))
            assets += build_forecast_assets(suite.name, [r.key for r in suite_runs(suite)], registry,
                                            "scaling_downstream_eval", "heldout_downstream_eval")
    return dg.Definitions(assets=assets)


def build_stage_defs() -> dg.Definitions:
    """The stage over the registered task sets, training runs and scaling suite, read when the stage loads."""
    return build_defs(load_task_sets(), load_training_runs(), load_scaling_recipe(default_recipe_path()))
