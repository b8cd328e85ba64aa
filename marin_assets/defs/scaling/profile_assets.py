"""Profile before scaling: scaling_profile[size] trains a few real steps of each size on the suite's
resources (step time, start-up/compile time, peak memory); scaling_plan reads every profile and
estimates each run's wall time and device-hours, shows the total, and refuses a suite above the
recipe's max_device_hours, naming its largest runs. Neither is automated: both are explicit,
and scaling_run refuses to train while a budgeted suite's committed plan is over budget.
"""

import dagster as dg

from marin_assets.lineage.code_versions import versioned
from marin_assets.core.hashing import hash_json
from marin_assets.data.sources.licenses import require_mixture_cleared
from marin_assets.core.metadata_tables import metadata_table
from marin_assets.lineage.recording import record_output
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.scaling import suite_plan
from marin_assets.scaling.outputs import GROUP
from marin_assets.scaling.run_results import output_parts
from marin_assets.scaling.suite import ScalingRecipe, SuiteRun, training_spec
from marin_assets.train import local_launcher
from marin_assets.train.launchers import MIXTURE_ASSET, mixture_for

PROFILE_FILE, PLAN_FILE = "profile.json", "plan.json"


def profile_parts(suite_name: str, size: str) -> tuple[str, ...]:
    return output_parts(suite_name, "profiles", size)


def plan_parts(suite_name: str) -> tuple[str, ...]:
    return output_parts(suite_name, "plan")


def build_profile_assets(recipe: ScalingRecipe, runs: list[SuiteRun]) -> list[dg.AssetsDefinition]:
    first_of_size = {}
    for run in runs:
        first_of_size.setdefault(run.size, run)
    sizes = sorted(first_of_size)
    partitions = dg.StaticPartitionsDefinition(sizes)
    mixture_dep = dg.AssetDep(MIXTURE_ASSET, partition_mapping=dg.StaticPartitionMapping({recipe.mixture: sizes}))
    section = recipe.model_dump(mode="json", include={"seq_len", "global_batch_size", "vocab_size", "sizes",
                                                      "profile_steps", "mixture"})

    @versioned(section)
    @dg.asset(name="scaling_profile", partitions_def=partitions, group_name=GROUP, deps=[mixture_dep],
              kinds={"maxtext"}, pool="training",
              description=f"A few real steps of one size of the {recipe.name} suite: step time, compile time, "
                          "peak memory; scaling_plan estimates every run from it.")
    def scaling_profile(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st, size = storage.storage, context.partition_key
        spec = training_spec(recipe, first_of_size[size])
        # profiling trains on the mixture too: the same data-use refusal as every other consumer
        require_mixture_cleared(st, f"scaling_profile[{size}]", spec.mixture)
        profile = local_launcher.measure_profile(context, spec, mixture_for(st, spec), recipe.profile_steps,
                                                 st.uri(".cache", "profile"))
        with st.atomic_dir(*profile_parts(recipe.name, size)) as staged:
            staged.write_json(profile, PROFILE_FILE)
            return record_output(
                context, staged, recipe=spec,
                output_hash=hash_json({"size": size, "steps": profile["steps"], "devices": profile["num_devices"]}),
                stats={"median_step_s": profile["median_step_s"], "startup_compile_s": profile["startup_compile_s"],
                       "peak_memory_gib": (profile["peak_memory_bytes"] or 0) / 1024**3},
            )


    @versioned({"max_device_hours": recipe.max_device_hours})
    @dg.asset(name="scaling_plan", group_name=GROUP,
              deps=[dg.AssetDep(scaling_profile, partition_mapping=dg.AllPartitionMapping())],
              kinds={"python"},
              description=f"Estimated wall time and device-hours of every {recipe.name} run from the profiles; "
                          "the total; fails above the recipe's max_device_hours, naming the largest runs.")
    def scaling_plan(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st = storage.storage
        profiles = {size: st.read_json(*profile_parts(recipe.name, size), PROFILE_FILE)
                    for size in sizes if st.is_committed(*profile_parts(recipe.name, size))}
        plan = suite_plan.plan_suite(runs, profiles, recipe.max_device_hours)
        with st.atomic_dir(*plan_parts(recipe.name)) as staged:
            staged.write_json(plan, PLAN_FILE)  # committed even when over budget: scaling_run reads the verdict
            result = record_output(
                context, staged, recipe=recipe,
                output_hash=hash_json(plan),
                stats={"total_device_hours": plan["total_device_hours"], "total_wall_hours": plan["total_wall_hours"],
                       "max_device_hours": str(plan["max_device_hours"]), "within_budget": plan["within_budget"]},
                extra_metadata={"runs": metadata_table(plan["runs"], columns=list(plan["runs"][0]))},
            )
        suite_plan.require_within_budget(plan)
        return result

    return [scaling_profile, scaling_plan]


def require_planned_within_budget(st, recipe: ScalingRecipe) -> None:
    """A suite with max_device_hours trains only once its committed plan is within the budget."""
    if recipe.max_device_hours is None:
        return
    if not st.is_committed(*plan_parts(recipe.name)):
        raise suite_plan.SuiteBudgetExceeded(
            f"{recipe.name} sets max_device_hours={recipe.max_device_hours:g}: materialize scaling_profile and "
            "scaling_plan first, so the suite's device-hours are known before anything trains")
    suite_plan.require_within_budget(st.read_json(*plan_parts(recipe.name), PLAN_FILE))
