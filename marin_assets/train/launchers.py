"""Where a run trains, by ResourceConfig.launcher, and the mixture it reads: shared by every stage that trains.

The training stage's `training_run` and the scaling stage's runs both launch through `LAUNCHERS`,
so they live here, beside neither stage's assets (a stage's wiring never imports another's).
"""

from __future__ import annotations

import os

import dagster as dg

from marin_assets.core.checkpoint_folders import CHECKPOINTS_TAG
from marin_assets.core.registries import Registry
from marin_assets.tokenize.mixture_info import load_mixture_info
from marin_assets.train.local_launcher import launch_local
from marin_assets.train.run_folder import run_paths
from marin_assets.train.run_result import TrainingPreempted

# The tokenize stage's asset every training run reads (its key only: no import of that stage's wiring).
MIXTURE_ASSET = dg.AssetKey("mixture")
# Every registered eval set (data stage's eval_set, by key): each run reports its loss and bpb on them.
EVAL_SETS_DEP = dg.AssetDep(dg.AssetKey("eval_set"), partition_mapping=dg.AllPartitionMapping())


# By ResourceConfig.launcher: the same spec trains on this machine or on every host of a TPU slice. Not
# discovered from a package: the Kubernetes launcher's client takes seconds to import, so it stays lazy.
LAUNCHERS = Registry("training launcher")


@LAUNCHERS.register("local")
def _launch_here(context, spec, storage, mixture, tpu_launcher):
    return launch_local(context, spec, storage, mixture)


@LAUNCHERS.register("kubernetes")
def _launch_on_tpu_slice(context, spec, storage, mixture, tpu_launcher):
    # The Kubernetes client takes seconds to import: only a TPU launch loads it.
    from marin_assets.train.k8s.training import launch_on_tpu_slice

    return launch_on_tpu_slice(context, spec, storage, mixture, tpu_launcher)


# A preempted trainer checkpointed and stopped: the step is retried in the same run and resumes.
PREEMPTION_RETRIES = int(os.environ.get("MARIN_PREEMPTION_RETRIES", 3))



def mixture_for(storage, spec):
    """The committed mixture a run trains on; it must have a validation split (the final eval loss)."""
    info = load_mixture_info(storage, spec.mixture)
    if not info.validation_glob:
        raise ValueError(f"mixture {spec.mixture!r} has no validation split; training needs one for the final eval loss")
    return info


def launch(context, spec, storage, mixture, tpu_launcher):
    """Train with the spec's launcher; a preempted trainer (it checkpointed) makes Dagster retry the step."""
    # Where this run checkpoints, on the Dagster run: a failure record links its last complete checkpoint.
    context.instance.add_run_tags(context.run.run_id, {CHECKPOINTS_TAG: run_paths(storage, spec).checkpoints_dir})
    return retry_when_preempted(
        context, lambda: LAUNCHERS.lookup(spec.resources.launcher, f"run {spec.run_name}: ")(context, spec, storage, mixture, tpu_launcher))


def retry_when_preempted(context, train):
    """Run `train()`; TrainingPreempted (a local trainer or a whole slice) -> dg.RetryRequested."""
    try:
        return train()
    except TrainingPreempted as exc:
        context.log.warning(f"{exc}; retrying ({context.retry_number + 1} of at most {PREEMPTION_RETRIES})")
        raise dg.RetryRequested(max_retries=PREEMPTION_RETRIES, seconds_to_wait=1) from exc
