"""Dagster wiring of the scaling stage, built from one scaling recipe.

scaling_run (one partition per budget x size, trained by the training stage's launcher)
  -> isoflop_fit, parametric_fit (re-materialize automatically when a run lands)
  -> scaling_predictions (target budgets)
parametric_fit -> heldout_prediction (explicit; preregistered) -> heldout_run (explicit; trains)
scaling_run -> scaling_hf_export (the runs recipes/hf_export.yaml names; explicit)
Training is never launched automatically: only the cheap fits carry an automation condition.
"""


import dagster as dg

from marin_assets.lineage.code_versions import versioned
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.train.k8s.resource import TpuPodLauncher
from marin_assets.scaling import result_paths, suite_observations
from marin_assets.defs.scaling.comparison_assets import build_comparison_asset
from marin_assets.defs.scaling.fit_assets import build_fit_assets
from marin_assets.scaling.fit_metric import downstream_selector
from marin_assets.defs.scaling.heldout_assets import build_heldout_assets
from marin_assets.defs.scaling.suite_hf_export_assets import build_scaling_hf_export
from marin_assets.defs.scaling.profile_assets import build_profile_assets, require_planned_within_budget
from marin_assets.scaling.outputs import GROUP, train_and_record
from marin_assets.scaling.suite import ScalingRecipe, heldout_run, suite_runs, target_budgets
from marin_assets.train.launchers import EVAL_SETS_DEP, MIXTURE_ASSET

TRAINING_FIELDS = ("mixture", "seq_len", "global_batch_size", "optimizer", "vocab_size", "eval_steps")
SUITE_EVAL_ASSET = "scaling_downstream_eval"  # the evaluation stage's asset, named (never imported)


def downstream_deps(metric: str) -> tuple[dg.AssetDep, ...]:
    """A fit of a downstream metric also reads the suite runs' evaluations: a new evaluation stales it."""
    if downstream_selector(metric) is None:
        return ()
    return (dg.AssetDep(SUITE_EVAL_ASSET, partition_mapping=dg.AllPartitionMapping()),)


def build_scaling_assets(recipe: ScalingRecipe) -> list[dg.AssetsDefinition]:
    runs = suite_runs(recipe)
    by_key = {r.key: r for r in runs}
    held = heldout_run(recipe)
    name = recipe.name
    partitions = dg.StaticPartitionsDefinition([r.key for r in runs])
    mixture_dep = dg.AssetDep(MIXTURE_ASSET, partition_mapping=dg.StaticPartitionMapping({recipe.mixture: list(by_key)}))
    training_section = recipe.model_dump(mode="json", include=set(TRAINING_FIELDS))

    @versioned(training_section)
    @dg.asset(name="scaling_run", partitions_def=partitions, group_name=GROUP, deps=[mixture_dep, EVAL_SETS_DEP],
              kinds={"maxtext"}, pool="training",
              description=f"One run of the {name} suite (partition = C<budget>__<size>): trains D = C/(6N) tokens.")
    def scaling_run(
        context: dg.AssetExecutionContext, storage: StorageResource, tpu_launcher: TpuPodLauncher
    ) -> dg.MaterializeResult:
        run = by_key[context.partition_key]
        require_planned_within_budget(storage.storage, recipe)  # a budgeted suite trains only within its plan
        parts = result_paths.run_parts(name, run.key)
        return train_and_record(context, storage.storage, recipe, run, parts, tpu_launcher)

    all_runs = dg.AssetDep(scaling_run, partition_mapping=dg.AllPartitionMapping())
    fits = build_fit_assets(
        name, recipe.fit, all_runs, lambda st: suite_observations.observations_for(st, recipe, runs),
        lambda iso: target_budgets(recipe), target_budgets(recipe), reader=suite_observations,
        extra_deps=downstream_deps(recipe.fit.metric))
    assets = [scaling_run, *fits, *build_profile_assets(recipe, runs + ([held] if held else [])),
              *build_scaling_hf_export(name, scaling_run, list(by_key))]
    if recipe.compare_with:
        assets.append(build_comparison_asset(recipe, all_runs))
    if held is not None:
        assets += build_heldout_assets(recipe, held, fits[1], training_section)
    return assets
