"""Run one training run on this machine: preflight, write the MaxText config, train through Pipes.

`launch_local` is what the `training_run` asset and the scaling stage call. MaxText's run folder
is `<storage>/training/<run>/` (checkpoints/, tensorboard/, logs/, maxtext.yml); re-launching an
interrupted run resumes from its last complete checkpoint (MaxText restores from its own run
folder; the LR schedule length is pinned in the config so the numbers match an uninterrupted run).
When W&B is configured (wandb_tracking), MaxText also logs the run there; offline runs land in
the run folder's wandb/.

One trainer per run folder: the launcher takes the folder's lease (train/lease.py) before looking at
its checkpoints and releases it when the trainer exited; the trainer heartbeats it, dies with this
process (trainer_guard) and, on SIGTERM, checkpoints and exits (TrainingPreempted: the asset retries).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time

import dagster as dg

from marin_assets.core import layout
from marin_assets.core.hashing import hash_json
from marin_assets.core.plotting import pyplot
from marin_assets.core.storage import MANIFEST_NAME, Storage, superseded_name
from marin_assets.train.checkpoints import latest_checkpoint_step
from marin_assets.train.gpu_environment import require_gpu_environment
from marin_assets.train.lease import HEARTBEAT_S, LEASE_FILE, STALE_AFTER_S, RunLease, lease_env
from marin_assets.train.maxtext_config import MixtureLike, maxtext_keys, write_maxtext_yaml
from marin_assets.train.maxtext_entry import PREEMPTED_MARKER
from marin_assets.train.metrics import read_scalars, series
from marin_assets.train.models import Budget
from marin_assets.train.pipes_line_reader import CompleteLinesFileMessageReader
from marin_assets.train.preflight import ProfileEstimate, extrapolate, require_fits
from marin_assets.train.registered_eval_sets import prepare_registered_eval_sets
from marin_assets.train.weights import assert_weights_cleared
from marin_assets.train.run_folder import ENTRY_MODULE, IDENTITY_FILE, plan_run, previous_inputs, run_paths
from marin_assets.train.run_result import TrainingError, TrainingPreempted, TrainingResult, collect_result
from marin_assets.train.runs import CheckpointSettings, EvalSettings, TrainingRunSpec
from marin_assets.train.trainer_guard import PARENT_ENV
from marin_assets.train.wandb_tracking import MAXTEXT_KEYS as WANDB_KEYS
from marin_assets.train.wandb_tracking import RUN_ID_FIELD, require_installed, run_id_for, wandb_settings

# Keys that may differ between attempts of one run without changing what it computes.
RESUME_NEUTRAL_KEYS = {"jax_cache_dir", *WANDB_KEYS}


def launch_local(
    context: dg.AssetExecutionContext,
    spec: TrainingRunSpec,
    storage: Storage,
    mixture_info: MixtureLike,
    output_parts: tuple[str, ...] = (layout.TRAINING,),
) -> TrainingResult:
    if not storage.is_local:
        raise TrainingError("launch_local needs a local storage root; TPU runs go through the Kubernetes launcher")
    report = plan_run(spec, mixture_info)
    require_fits(report)
    if spec.resources.accelerator == "gpu":
        res = spec.resources
        kinds = require_gpu_environment(res.chips_per_host, res.gpu_type, res.process_env())
        context.log.info(f"{spec.run_name}: training on {len(kinds)} GPU(s): {', '.join(kinds)}")
    paths = run_paths(storage, spec, output_parts)
    keys = maxtext_keys(spec, mixture_info, paths)
    wandb = wandb_settings()
    if wandb is not None:
        require_installed(wandb)
        keys.update(wandb.maxtext_keys(spec.run_name))
    # One writer per run folder: a live lease makes this run wait (its trainer may still be
    # checkpointing after a SIGTERM), a stale one (dead pids, old heartbeat) is taken over.
    lease = RunLease(paths.run_dir, context.run_id)
    lease_from = time.monotonic()
    lease.acquire(wait_s=STALE_AFTER_S + HEARTBEAT_S)
    waiting_s = queued_s(context) + time.monotonic() - lease_from
    if lease.taken_over is not None:
        context.log.warning(f"{spec.run_name}: took over the stale lease of {lease.taken_over.describe()}")
    try:
        return _train_under_lease(context, spec, storage, mixture_info, report, paths, keys, wandb, lease, waiting_s)
    finally:
        lease.release()


def _train_under_lease(context, spec, storage, mixture_info, report, paths, keys, wandb, lease,
                       waiting_s: float = 0.0) -> TrainingResult:
    resumed_from = latest_checkpoint_step(paths.checkpoints_dir)
    config_path = f"{paths.run_dir}/maxtext.yml"
    identity = _input_identity(storage, spec, mixture_info)
    previous = previous_inputs(storage, paths.run_dir)
    if resumed_from is not None and not _resumable(previous, identity, resumed_from, spec.final_step):
        # Finished, or trained on other data: resuming would mix two runs. Set it aside, start over.
        superseded = set_aside(paths.run_dir)
        context.log.warning(f"{spec.run_name}: previous run folder moved to {superseded}; training from scratch")
        resumed_from, previous = None, {}
    if resumed_from is not None:
        _refuse_changed_config(config_path, keys)
    os.makedirs(paths.run_dir, exist_ok=True)
    # after any set_aside: the trainer reads these from its own run folder after training
    prepare_registered_eval_sets(storage, mixture_info, paths.run_dir, context.log)
    wandb_run_id = run_id_for(spec.run_name, previous, resuming=resumed_from is not None)
    with open(f"{paths.run_dir}/{IDENTITY_FILE}", "w") as f:
        json.dump({"mixture": identity, RUN_ID_FIELD: wandb_run_id}, f)
    write_maxtext_yaml(keys, config_path)
    if resumed_from is not None:
        context.log.info(f"{spec.run_name}: resuming from checkpoint {resumed_from} of {spec.final_step}")
    os.makedirs(f"{paths.run_dir}/logs", exist_ok=True)
    log_file = f"{paths.run_dir}/logs/train-{time.strftime('%Y%m%dT%H%M%S')}.log"

    started = time.monotonic()
    # The orchestrator idles while the child trains: load what the result step needs meanwhile.
    threading.Thread(target=_warm_imports, daemon=True).start()
    env = {**spec.resources.process_env(), **lease_env(lease), PARENT_ENV: str(os.getpid())}
    if wandb is not None:
        env.update(wandb.process_env(wandb_run_id, paths.run_dir))
    client = dg.PipesSubprocessClient(env=env, message_reader=CompleteLinesFileMessageReader())
    try:
        invocation = client.run(
            context=context, command=[sys.executable, "-m", ENTRY_MODULE, config_path, "--log-file", log_file]
        )
    except Exception as exc:  # Pipes raises its (non-public) execution error when the process fails
        reason = _failure_reason(log_file) or str(exc)
        if reason.startswith(PREEMPTED_MARKER):
            raise TrainingPreempted(f"{spec.run_name}: {reason.removeprefix(PREEMPTED_MARKER)}; log: {log_file}") from exc
        raise TrainingError(f"training process for {spec.run_name} failed: {reason}; log: {log_file}") from exc
    wall, exited_at = time.monotonic() - started, time.time()
    messages = invocation.get_custom_messages()
    if not messages:
        raise TrainingError(f"training process for {spec.run_name} exited without a result; log: {log_file}")
    summary = messages[-1]
    result = collect_result(spec, paths, report, summary, config_path, wall, resumed_from, waiting_s)
    if "finished_at" in summary:
        result.exit_s = round(max(0.0, exited_at - summary["finished_at"]), 3)
    write_efficiency_scalars(paths.tensorboard_dir, spec.final_step, result.efficiency)
    return result


def queued_s(context: dg.AssetExecutionContext) -> float:
    """How long this Dagster run waited in the queue (for a pool slot) before it started."""
    try:
        run_id = context.run.run_id
    except dg.DagsterError:  # invoked directly (tests, scripts): no Dagster run, so no queue either
        return 0.0
    record = context.instance.get_run_record_by_id(run_id)
    if record is None or record.start_time is None or record.create_timestamp is None:
        return 0.0
    return max(0.0, record.start_time - record.create_timestamp.timestamp())


def write_efficiency_scalars(tensorboard_dir: str, step: int, efficiency: dict) -> None:
    """MFU, goodput, badput by cause and memory into the run's TensorBoard, beside MaxText's own scalars."""
    from tensorboardX import SummaryWriter

    values = {"efficiency/mfu": efficiency.get("mfu"), "efficiency/goodput": efficiency.get("goodput"),
              "efficiency/tokens_per_s": efficiency.get("tokens_per_s"),
              "efficiency/peak_memory_gib": (efficiency.get("memory", {}).get("measured_bytes") or 0) / 1024**3 or None,
              "efficiency/memory_estimate_gib": (efficiency.get("memory", {}).get("estimate_bytes") or 0) / 1024**3 or None}
    values.update({f"badput_s/{k}": v for k, v in (efficiency.get("badput_s") or {}).items()})
    with SummaryWriter(f"{tensorboard_dir}/efficiency") as writer:
        for tag, value in values.items():
            if value is not None:
                writer.add_scalar(tag, value, step)


def set_aside(run_dir: str) -> str:
    """Move a run's training state to a sibling folder so the run starts over; its committed plan stays.

    final/ (what marks the run finished) moves first: a crash midway never leaves a run that looks done.
    """
    superseded = superseded_name(run_dir)
    os.makedirs(superseded)
    for name in sorted(os.listdir(run_dir), key=lambda name: name != layout.FINAL_DIR):
        if name not in (layout.PLAN_DIR, LEASE_FILE):
            os.rename(os.path.join(run_dir, name), os.path.join(superseded, name))
    return superseded


def _input_identity(storage: Storage, spec: TrainingRunSpec, mixture_info: MixtureLike) -> str:
    """The mixture's data version (from its manifest), else a hash of its description; with the
    init weights' checksum when the run starts from a checkpoint (new parent: start over)."""
    if spec.init is not None:
        weights = assert_weights_cleared(storage, spec.init.weights)
        return hash_json({"mixture": _input_identity(storage, spec.model_copy(update={"init": None}), mixture_info),
                          "init": weights.checksum})
    manifest = f"{storage.committed_uri(layout.MIXTURES, spec.mixture)}/{MANIFEST_NAME}"
    if storage.fs.exists(manifest):
        with storage.fs.open(manifest, "r") as f:
            recorded = json.load(f).get("output_hash")
        if recorded:
            return recorded
    info = mixture_info.model_dump() if hasattr(mixture_info, "model_dump") else vars(mixture_info)
    return hash_json(info)


def _resumable(previous: dict, identity: str, checkpoint_step: int, final_step: int) -> bool:
    """An interrupted run of the same data resumes; a finished one or one on other data does not."""
    return checkpoint_step < final_step and previous.get("mixture") == identity


def _warm_imports() -> None:
    import tensorboardX.proto.event_pb2  # noqa: F401

    pyplot()


def _failure_reason(log_file: str) -> str | None:
    """The entry's own verdict (e.g. MaxText's silent 'Training stopped'), else None (killed, crashed)."""
    try:
        lines = open(log_file).read().splitlines()
    except FileNotFoundError:
        return None
    verdicts = [line.split("TrainingFailed: ", 1)[1] for line in lines if "TrainingFailed: " in line]
    verdicts += [PREEMPTED_MARKER + line.split(PREEMPTED_MARKER, 1)[1] for line in lines if PREEMPTED_MARKER in line]
    return verdicts[-1] if verdicts else None


def _refuse_changed_config(config_path: str, keys: dict) -> None:
    """Resuming under a different config would silently mix two runs in one folder."""
    import yaml

    try:
        previous = yaml.safe_load(open(config_path))
    except FileNotFoundError:
        return
    previous.pop("base_config", None)
    changed = sorted(
        k for k in (set(previous) | set(keys)) - RESUME_NEUTRAL_KEYS if previous.get(k) != keys.get(k)
    )
    if changed:
        raise TrainingError(
            f"{config_path} has checkpoints from a run with a different config (keys {changed}); "
            "give the run a new name, or delete its folder to start over"
        )


def profile_local(
    context: dg.AssetExecutionContext, spec: TrainingRunSpec, mixture_info: MixtureLike, steps: int, scratch_root: str
) -> ProfileEstimate:
    """Train `steps` steps of the run's exact model/batch in a scratch folder; extrapolate the full run."""
    measured = measure_profile(context, spec, mixture_info, steps, scratch_root)
    return extrapolate(measured["step_seconds"], spec.steps, spec.resources.num_devices())


def measure_profile(
    context: dg.AssetExecutionContext, spec: TrainingRunSpec, mixture_info: MixtureLike, steps: int, scratch_root: str
) -> dict:
    """A few real steps of the run's model on its resources: step times, start-up/compile time, peak memory."""
    probe = spec.model_copy(update={
        "run_name": f"{spec.run_name}-profile",
        "budget": Budget(steps=steps),
        "eval": EvalSettings(steps=1),
        "checkpoint": CheckpointSettings(period=steps),
    })
    storage = Storage(scratch_root)
    paths = run_paths(storage, probe)
    shutil.rmtree(paths.run_dir, ignore_errors=True)
    try:
        result = launch_local(context, probe, storage, mixture_info)
        step_seconds = [v for _, v in series(read_scalars(result.tensorboard_dir), "perf/step_time_seconds")]
    finally:
        shutil.rmtree(paths.run_dir, ignore_errors=True)
    eff, memory = result.efficiency, result.efficiency.get("memory") or {}
    estimate = extrapolate(step_seconds, steps, spec.resources.num_devices())
    return {
        "steps": steps,
        "step_seconds": step_seconds,
        "median_step_s": estimate.median_step_s,
        "startup_compile_s": (eff.get("badput_s") or {}).get("startup_compile"),
        "peak_memory_bytes": memory.get("measured_bytes"),
        "memory_estimate_bytes": memory.get("estimate_bytes"),
        "memory_source": memory.get("source"),
        "num_devices": spec.resources.num_devices(),
        "tokens_per_s": eff.get("tokens_per_s"),
        "mfu": eff.get("mfu"),
    }
