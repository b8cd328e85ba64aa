"""Dagster wiring of the training stage: mixture -> training_plan -> training_run, one partition per run.
`training_run_spec` (observable source) gives each run's entry in runs.yaml a data version, so
editing or adding one run stales that run's partitions only; the assets' code versions cover code.
`training_plan` is cheap (preflight, the MaxText config, optionally a short profiling run); its
blocking check `preflight_fits` stops a run that would not fit before any device is used.
`training_run` trains (resuming from the run folder's last checkpoint) and commits
`training/<run>/final/` atomically, so a crashed run never looks complete. Its data version is the
final checkpoint's content hash.
"""

from dataclasses import asdict

import dagster as dg

from marin_assets.core import layout
from marin_assets.lineage.code_versions import versioned
from marin_assets.core.hashing import hash_json
from marin_assets.data.sources.licenses import require_mixture_cleared
from marin_assets.lineage.recording import record_output
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.train import bits_per_byte, maxtext_config
from marin_assets.train.launchers import EVAL_SETS_DEP, MIXTURE_ASSET, launch, mixture_for
from marin_assets.train.local_launcher import profile_local
from marin_assets.train.report import (PLOT_FILE, domain_metadata, efficiency_summary_line, preflight_metadata,
                                       result_metadata, routing_metadata, write_result_files)
from marin_assets.train.k8s.resource import TpuPodLauncher
from marin_assets.train.hardware import LOCAL_PARTITIONS_METADATA
from marin_assets.train.run_folder import hf_fit_problems, plan_run, run_paths
from marin_assets.train.runs import TrainingRuns
from marin_assets.train.weights import ResolvedWeights, load_weights, prepared_weights


class PlanConfig(dg.Config):
    profile_steps: int = 0  # > 0: also train this many steps to measure step time and extrapolate the run


def run_spec_version(runs: TrainingRuns, name: str) -> str:
    """A run's entry as the run sees it (model recipe resolved): model, resources, mixture, steps, seed...
    and, for `init: {weights: NAME}`, that weights entry (its checksum pins the parent checkpoint, so a
    new parent, once registered, stales the run)."""
    spec = runs.spec(name)
    data = spec.model_dump(mode="json")
    if spec.init is not None:
        registry = load_weights()
        known = spec.init.weights in registry.names
        data["init_weights"] = registry.get(spec.init.weights).model_dump(mode="json") if known else None
    return hash_json(data)


def init_metadata(init: ResolvedWeights | None) -> dict:
    if init is None:
        return {}
    return {"init_weights": init.name, "init_checkpoint": dg.MetadataValue.path(init.checkpoint_dir),
            "init_checksum": init.checksum}


def init_inputs(init: ResolvedWeights | None) -> dict[str, tuple[str, str]]:
    """The parent run as an input of the manifest (its final/ holds its own manifest: the chain goes on)."""
    if init is None or init.parent_run is None:
        return {}
    return {f"training_run[{init.parent_run}]": (init.checksum, init.parent_output)}


def _run_spec_source(runs: TrainingRuns, partitions) -> dg.SourceAsset:
    @dg.observable_source_asset(
        name="training_run_spec", partitions_def=partitions, group_name="train",
        description="Each run's entry in recipes/training/runs.yaml (with its model recipe); data version = its hash.",
    )
    def training_run_spec(context) -> dg.DataVersionsByPartition:
        # Observed by `marin materialize-all` (and from the UI); a new hash stales exactly that run.
        return dg.DataVersionsByPartition({name: run_spec_version(runs, name) for name in sorted(runs.runs)})

    return training_run_spec


def build_training_assets(runs: TrainingRuns) -> tuple[dg.SourceAsset, dg.AssetsDefinition, dg.AssetsDefinition]:
    names = sorted(runs.runs)
    partitions = dg.StaticPartitionsDefinition(names)
    runs_by_mixture: dict[str, list[str]] = {}
    for name in names:
        runs_by_mixture.setdefault(runs.spec(name).mixture, []).append(name)
    mixture_dep = dg.AssetDep(MIXTURE_ASSET, partition_mapping=dg.StaticPartitionMapping(runs_by_mixture))
    run_spec = _run_spec_source(runs, partitions)
    # Each partition reads its own run entry only: editing or adding one run stales that run alone.
    spec_dep = dg.AssetDep(run_spec, partition_mapping=dg.IdentityPartitionMapping())

    @versioned("training_plan")
    @dg.asset(
        name="training_plan", partitions_def=partitions, group_name="train", deps=[spec_dep, mixture_dep],
        kinds={"python"},
        description="Preflight of a training run (params, FLOPs, memory vs the accelerator, mesh) + its MaxText config.",
    )
    def training_plan(context: dg.AssetExecutionContext, config: PlanConfig, storage: StorageResource):
        st, spec = storage.storage, runs.spec(context.partition_key)
        require_mixture_cleared(st, f"training_plan[{spec.run_name}]", spec.mixture)
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
                context, staged, recipe=spec,
                # paths and measured times vary by machine; the plan's identity does not
                output_hash=hash_json({"spec": plan["spec"], "preflight": plan["preflight"]}),
                extra_metadata=preflight_metadata(plan, profile),
            )

    local_runs = [n for n in names if runs.spec(n).resources.launcher == "local"]
    remote_runs = [f"{n} ({runs.spec(n).resources.launcher})" for n in names if n not in local_runs]

    @versioned("training_run")
    @dg.asset(
        name="training_run", partitions_def=partitions, group_name="train",
        deps=[spec_dep, training_plan, mixture_dep, EVAL_SETS_DEP],
        kinds={"maxtext"}, pool="training",
        # materialize-all on a workstation trains only the runs this machine can run
        metadata={LOCAL_PARTITIONS_METADATA: local_runs, "not_trainable_here": ", ".join(remote_runs) or "none"},
        description="A MaxText pre-training run; resumes from its last checkpoint; data version = checkpoint content hash."
        + (f" Runs {', '.join(remote_runs)} train on their production launcher (TPU slice on Kubernetes): they "
           "cannot train on a workstation, and `marin materialize-all` skips them here." if remote_runs else ""),
    )
    def training_run(
        context: dg.AssetExecutionContext, storage: StorageResource, tpu_launcher: TpuPodLauncher
    ) -> dg.MaterializeResult:
        st, spec = storage.storage, runs.spec(context.partition_key)
        # Data-use rights first: refuse to spend compute on a mixture built from any uncleared source.
        require_mixture_cleared(st, f"training_run[{spec.run_name}]", spec.mixture)
        st.require_committed(layout.TRAINING, spec.run_name, layout.PLAN_DIR)
        # Weights rights and integrity: an unknown, uncleared or changed parent checkpoint is refused here.
        init = prepared_weights(st, spec.init.weights, fits=lambda config: hf_fit_problems(spec, config)) \
            if spec.init else None
        mixture = mixture_for(st, spec)
        result = launch(context, spec, st, mixture, tpu_launcher)
        evaluation = bits_per_byte.run_evaluation(result, mixture)
        with st.atomic_dir(layout.TRAINING, spec.run_name, layout.FINAL_DIR) as staged:
            title = f"{spec.run_name} ({spec.model.name} on {spec.mixture})"
            png = write_result_files(staged, result, title, evaluation)
            return record_output(
                context, staged, recipe=spec,
                output_hash=result.checkpoint_hash,
                devices=[f"{spec.resources.accelerator} x{spec.resources.num_devices()}"],
                stats={"efficiency": efficiency_summary_line(result.efficiency),
                       "final_eval_loss": result.final_eval_loss, "checkpoint_step": result.checkpoint_step,
                       "mixture_tokenizer_hash": mixture.tokenizer_hash,
                       "bpb": evaluation["metrics"].get("bpb") or "none"},
                extra_metadata={**result_metadata(result, png, f"{staged.final_uri}/{PLOT_FILE}"),
                                **domain_metadata(staged, evaluation, result.domain_eval_error),
                                **routing_metadata(staged, result),
                                **init_metadata(init)},
                manifest_extra={"init_weights": init.record()} if init else None,
                extra_inputs=init_inputs(init),
            )

    return run_spec, training_plan, training_run
