"""Dagster wiring of the training stage: mixture -> training_plan -> training_run, one partition per run.
`training_plan` is cheap (preflight, the MaxText config, optionally a short profiling run); its
blocking check `preflight_fits` stops a run that would not fit before any device is used.
`training_run` trains (resuming from the run folder's last checkpoint) and commits
`training/<run>/final/` atomically, so a crashed run never looks complete. Its data version is the
final checkpoint's content hash.
"""

import os
from dataclasses import asdict

import dagster as dg

from marin_assets.core import layout
from marin_assets.core.hashing import code_version, hash_json
from marin_assets.governance.licenses import assert_sources_cleared, sources_behind
from marin_assets.governance.recording import record_output
from marin_assets.materialize_all import LOCAL_PARTITIONS_METADATA
from marin_assets.resources.storage import StorageResource
from marin_assets.train import checkpoints, maxtext_config, maxtext_entry, models, preflight, resources, run_result
from marin_assets.train.local_launcher import launch_local, plan_run, profile_local, run_paths
from marin_assets.train.report import PLOT_FILE, preflight_metadata, result_metadata, write_result_files
from marin_assets.train.k8s.resource import TpuPodLauncher
from marin_assets.train.run_result import TrainingPreempted
from marin_assets.train.runs import TrainingRuns

MIXTURE_ASSET = dg.AssetKey("mixture")
# A preempted trainer checkpointed and stopped: the step is retried in the same run and resumes.
PREEMPTION_RETRIES = int(os.environ.get("MARIN_PREEMPTION_RETRIES", 3))


def _launch_on_tpu_slice(context, spec, storage, mixture, tpu_launcher):
    from marin_assets.train.k8s import launch_on_tpu_slice

    return launch_on_tpu_slice(context, spec, storage, mixture, tpu_launcher)


# By ResourceConfig.launcher: the same spec trains on this machine or on every host of a TPU slice.
LAUNCHERS = {
    "local": lambda context, spec, storage, mixture, tpu_launcher: launch_local(context, spec, storage, mixture),
    "kubernetes": _launch_on_tpu_slice,
}


def launch(context, spec, storage, mixture, tpu_launcher):
    """Train with the spec's launcher; a preempted trainer (it checkpointed) makes Dagster retry the step."""
    try:
        return LAUNCHERS[spec.resources.launcher](context, spec, storage, mixture, tpu_launcher)
    except TrainingPreempted as exc:
        context.log.warning(f"{exc}; retrying ({context.retry_number + 1} of at most {PREEMPTION_RETRIES})")
        raise dg.RetryRequested(max_retries=PREEMPTION_RETRIES, seconds_to_wait=1) from exc


class PlanConfig(dg.Config):
    profile_steps: int = 0  # > 0: also train this many steps to measure step time and extrapolate the run


def mixture_for(storage, spec):
    from marin_assets.tokenize.mixture_info import load_mixture_info

    info = load_mixture_info(storage, spec.mixture)
    if not info.validation_glob:
        raise ValueError(f"mixture {spec.mixture!r} has no validation split; training needs one for the final eval loss")
    return info


def build_training_assets(runs: TrainingRuns) -> tuple[dg.AssetsDefinition, dg.AssetsDefinition]:
    names = sorted(runs.runs)
    partitions = dg.StaticPartitionsDefinition(names)
    runs_by_mixture: dict[str, list[str]] = {}
    for name in names:
        runs_by_mixture.setdefault(runs.spec(name).mixture, []).append(name)
    mixture_dep = dg.AssetDep(MIXTURE_ASSET, partition_mapping=dg.StaticPartitionMapping(runs_by_mixture))
    recipe_section = runs.model_dump(mode="json")
    plan_version = code_version(recipe_section, models, preflight, maxtext_config)
    # What decides a run's numbers (its devices included); not how its process is launched and watched.
    run_version = code_version(recipe_section, models, resources, maxtext_config, maxtext_entry, checkpoints,
                               run_result)

    @dg.asset(
        name="training_plan", partitions_def=partitions, group_name="train", deps=[mixture_dep],
        code_version=plan_version, kinds={"python"},
        description="Preflight of a training run (params, FLOPs, memory vs the accelerator, mesh) + its MaxText config.",
    )
    def training_plan(context: dg.AssetExecutionContext, config: PlanConfig, storage: StorageResource):
        st, spec = storage.storage, runs.spec(context.partition_key)
        mixture = mixture_for(st, spec)
        report = plan_run(spec, mixture)
        profile = None
        if config.profile_steps > 0 and report.fits and spec.resources.launcher == "local":
            profile = profile_local(context, spec, mixture, config.profile_steps, st.uri(".cache", "profile"))
        keys = maxtext_config.maxtext_keys(spec, mixture, run_paths(st, spec)) if report.fits else {}
        plan = {
            "spec": spec.model_dump(mode="json"),
            "preflight": report.to_json(),
            "maxtext_keys": keys,
            "profile": asdict(profile) if profile else None,
        }
        with st.atomic_dir(layout.TRAINING, spec.run_name, layout.PLAN_DIR) as staged:
            staged.write_json(plan, "plan.json")
            return record_output(
                context, staged, recipe=spec, code_version=plan_version,
                # paths and measured times vary by machine; the plan's identity does not
                output_hash=hash_json({"spec": plan["spec"], "preflight": plan["preflight"]}),
                extra_metadata=preflight_metadata(plan, profile),
            )

    @dg.asset(
        name="training_run", partitions_def=partitions, group_name="train", deps=[training_plan, mixture_dep],
        code_version=run_version, kinds={"maxtext"}, pool="training",
        # materialize-all on a workstation trains only the runs this machine can run
        metadata={LOCAL_PARTITIONS_METADATA: [n for n in names if runs.spec(n).resources.launcher == "local"]},
        description="A MaxText pre-training run; resumes from its last checkpoint; data version = checkpoint content hash.",
    )
    def training_run(
        context: dg.AssetExecutionContext, storage: StorageResource, tpu_launcher: TpuPodLauncher
    ) -> dg.MaterializeResult:
        st, spec = storage.storage, runs.spec(context.partition_key)
        st.require_committed(layout.TRAINING, spec.run_name, layout.PLAN_DIR)
        # Data-use rights: refuse to spend compute on a mixture built from any uncleared source.
        assert_sources_cleared(st, sources_behind(st, [st.uri(layout.MIXTURES, spec.mixture)]))
        mixture = mixture_for(st, spec)
        result = launch(context, spec, st, mixture, tpu_launcher)
        with st.atomic_dir(layout.TRAINING, spec.run_name, layout.FINAL_DIR) as staged:
            png = write_result_files(staged, result, f"{spec.run_name} ({spec.model.name} on {spec.mixture})")
            return record_output(
                context, staged, recipe=spec, code_version=run_version,
                output_hash=result.checkpoint_hash,
                devices=[f"{spec.resources.accelerator} x{spec.resources.num_devices()}"],
                stats={"final_eval_loss": result.final_eval_loss, "checkpoint_step": result.checkpoint_step,
                       "mixture_tokenizer_hash": mixture.tokenizer_hash},
                extra_metadata=result_metadata(result, png, f"{staged.final_uri}/{PLOT_FILE}"),
            )

    return training_plan, training_run
