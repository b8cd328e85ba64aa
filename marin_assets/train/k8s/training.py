"""The "kubernetes" launcher of training_run: the same TrainingRunSpec, trained on a TPU slice.

Like `launch_local`, but MaxText runs in the TPU image on every host of the slice. The MaxText
config travels in the pods' environment (MARIN_MAXTEXT_YAML) and each pod writes it to a local
file before starting the same entry point as local runs, so nothing needs a shared filesystem
except the run folder on gs://, where MaxText writes checkpoints and TensorBoard events and where
the config is also kept for the record. The lead pod reports the result through Pipes (GCS).
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import dagster as dg

from marin_assets.core.storage import Storage
from marin_assets.train.checkpoints import checkpoint_steps, latest_checkpoint_step
from marin_assets.train.k8s.launcher import SlicePreempted
from marin_assets.train.k8s.resource import TpuPodLauncher
from marin_assets.train.registered_eval_sets import prepare_registered_eval_sets
from marin_assets.train.run_folder import ENTRY_MODULE, IDENTITY_FILE, plan_run, previous_inputs, run_paths
from marin_assets.train.maxtext_config import MixtureLike, maxtext_keys, write_maxtext_yaml
from marin_assets.train.preflight import require_fits
from marin_assets.train.run_result import TrainingError, TrainingPreempted, TrainingResult, collect_result
from marin_assets.train.runs import TrainingRunSpec
from marin_assets.train.wandb_tracking import RUN_ID_FIELD, run_id_for, wandb_settings

CONFIG_ENV = "MARIN_MAXTEXT_YAML"
POD_CONFIG_PATH = "/tmp/marin/maxtext.yml"
POD_WANDB_DIR = "/tmp/marin/wandb"  # pod-local: on a slice W&B is meant to run online


def pod_command(entry_module: str = ENTRY_MODULE, config_path: str = POD_CONFIG_PATH) -> list[str]:
    """Write the config carried in $MARIN_MAXTEXT_YAML to a local file, then exec the entry on it.

    `${VAR}` is expanded by the shell in the pod (Kubernetes only expands `$(VAR)`).
    """
    folder = config_path.rsplit("/", 1)[0]
    script = (f'mkdir -p {folder} && printf "%s" "${{{CONFIG_ENV}}}" > {config_path} '
              f"&& exec python -m {entry_module} {config_path}")
    return ["sh", "-c", script]


def maxtext_yaml_text(keys: dict) -> str:
    """The config file exactly as local runs write it (one writer: maxtext_config.write_maxtext_yaml)."""
    with tempfile.TemporaryDirectory() as folder:
        return Path(write_maxtext_yaml(keys, f"{folder}/maxtext.yml")).read_text()


def launch_on_tpu_slice(
    context: dg.AssetExecutionContext, spec: TrainingRunSpec, storage: Storage, mixture_info: MixtureLike,
    launcher: TpuPodLauncher,
) -> TrainingResult:
    if storage.is_local:
        raise TrainingError(f"{spec.run_name}: a TPU slice writes to shared storage; set MARIN_STORAGE_ROOT to gs://...")
    report = plan_run(spec, mixture_info)
    require_fits(report)
    paths = run_paths(storage, spec)
    keys = maxtext_keys(spec, mixture_info, paths)
    config_uri = f"{paths.run_dir}/maxtext.yml"
    resumed_from = latest_checkpoint_step(paths.checkpoints_dir)
    wandb_env = wandb_for_slice(storage, spec.run_name, paths.run_dir, resumed_from, keys)
    text = maxtext_yaml_text(keys)
    storage.fs.pipe(config_uri, text.encode())
    prepare_registered_eval_sets(storage, mixture_info, paths.run_dir, context.log)  # the lead pod evaluates them
    started = time.monotonic()
    invocation = run_on_slice(context, launcher, command=pod_command(), resources=spec.resources,
                              run_name=spec.run_name, output_uri=paths.base_output_directory,
                              env={CONFIG_ENV: text, **wandb_env}, checkpoints_dir=paths.checkpoints_dir)
    messages = invocation.get_custom_messages()
    if not messages:
        raise TrainingError(f"{spec.run_name}: the slice finished without a result from its lead pod")
    return collect_result(spec, paths, report, messages[-1], config_uri, time.monotonic() - started, resumed_from)


def run_on_slice(context, launcher: TpuPodLauncher, *, checkpoints_dir: str, run_name: str, **launch):
    """launcher.run; a preempted slice (every failed pod preempted) becomes TrainingPreempted, which
    `launchers.launch` turns into Dagster's step retry, the same as a preempted local trainer."""
    try:
        return launcher.run(context=context, run_name=run_name, **launch)
    except SlicePreempted as exc:
        raise TrainingPreempted(f"{run_name}: {preemption_summary(exc.steps, checkpoints_dir)}") from exc


def preemption_summary(steps: dict[str, int | None], checkpoints_dir: str) -> str:
    """Which step the retry resumes from: a checkpoint every host saved and orbax finalized, or an earlier one.

    Orbax finalizes a step (its _CHECKPOINT_METADATA) only once every host wrote its shards, and
    MaxText resumes from the latest finalized step, so a step the hosts disagree on, or one a host
    did not finish, is never used; this says which one the retry will take.
    """
    saved = set(steps.values())
    complete = checkpoint_steps(checkpoints_dir)
    resume = complete[-1] if complete else None
    hosts = ", ".join(f"{pod}: {'no checkpoint' if step is None else f'step {step}'}" for pod, step in sorted(steps.items()))
    agreed = len(saved) == 1 and None not in saved and next(iter(saved)) in complete
    verdict = (f"every host checkpointed step {resume}" if agreed and resume in saved else
               f"no checkpoint complete on all hosts at the preemption ({hosts}); "
               + (f"resuming from step {resume}" if resume is not None else "starting over"))
    return f"slice preempted ({len(steps)} pod(s): {hosts}); {verdict}; a retry resumes from it"


def wandb_for_slice(storage: Storage, run_name: str, run_dir: str, resumed_from: int | None, keys: dict) -> dict:
    """When W&B is configured: MaxText's W&B keys into `keys`, and the pods' W&B environment.

    MaxText logs from process 0 only. The run id lives in the gs:// run folder, so a resumed run
    continues the same W&B run; the API key reaches the pods from a Secret (TpuPodLauncher.secret_env).
    """
    settings = wandb_settings()
    if settings is None:
        return {}
    keys.update(settings.maxtext_keys(run_name))
    previous = previous_inputs(storage, run_dir) if resumed_from is not None else {}
    run_id = run_id_for(run_name, previous, resuming=resumed_from is not None)
    storage.fs.makedirs(run_dir, exist_ok=True)  # a no-op on gs://
    storage.fs.pipe(f"{run_dir}/{IDENTITY_FILE}", json.dumps({**previous, RUN_ID_FIELD: run_id}).encode())
    return settings.process_env(run_id, POD_WANDB_DIR)
