"""What a finished run reports: its TrainingResult, read from its TensorBoard scalars and the
training process' summary.

Together with the MaxText config, the entry, the checkpoint code and the device setup (resources),
this decides a run's numbers, so it is part of the training assets' code version; how the process
is launched and watched (local_launcher, k8s) is not: editing that does not make trained runs stale.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field

from marin_assets.train.checkpoints import checkpoint_uri
from marin_assets.train.maxtext_config import RunPaths
from marin_assets.train.metrics import read_scalars, series
from marin_assets.train.preflight import PreflightReport
from marin_assets.train.runs import TrainingRunSpec

RESULT_FILE = "result.json"  # training/<run>/final/result.json: TrainingResult.to_json() + the evaluation


class TrainingError(RuntimeError):
    pass


class TrainingPreempted(TrainingError):
    """The trainer was asked to stop (SIGTERM/SIGINT), wrote a checkpoint and exited: retry to resume."""


@dataclass
class TrainingResult:
    final_eval_loss: float
    eval_tokens: float
    loss_curve: list[tuple[int, float]]
    eval_curve: list[tuple[int, float]]
    tokens_per_s: float | None
    tflops_per_device: float | None
    checkpoint_uri: str
    checkpoint_step: int
    checkpoint_hash: str
    num_params: int
    flops_per_token: float
    wall_s: float
    run_dir: str
    maxtext_config_path: str
    tensorboard_dir: str
    resumed_from_step: int | None = None
    preflight: dict = field(default_factory=dict)
    wandb: dict | None = None  # wandb_tracking.finish_run() of the training process
    maxtext_s: float | None = None  # of wall_s, the time spent importing and running MaxText itself
    exit_s: float | None = None  # of wall_s, the training process' exit (JAX teardown) after it reported
    domain_eval: dict = field(default_factory=dict)  # {source or eval set: {loss, tokens}} of the final checkpoint
    eval_sets: dict = field(default_factory=dict)  # {eval set: {documents, tokens, bytes}} of its raw text
    eval_sets_missing: dict = field(default_factory=dict)  # {eval set: why it was not evaluated}
    domain_eval_error: str | None = None
    domain_eval_s: float | None = None  # of wall_s, the per-domain evaluation after training

    def to_json(self) -> dict:
        return asdict(self)


def collect_result(
    spec: TrainingRunSpec,
    paths: RunPaths,
    report: PreflightReport,
    summary: dict,
    config_path: str,
    wall_s: float,
    resumed_from: int | None,
) -> TrainingResult:
    scalars = read_scalars(paths.tensorboard_dir)
    final = spec.final_step
    eval_loss = scalars.get("eval/avg_loss", {}).get(final)
    if eval_loss is None:
        raise TrainingError(f"{spec.run_name}: no eval loss after the last step {final} in {paths.tensorboard_dir}")
    tokens_per_s = _median_after_compile(scalars, "perf/per_device_tokens_per_sec")
    return TrainingResult(
        final_eval_loss=eval_loss,
        eval_tokens=scalars.get("eval/total_weights", {}).get(final, 0.0),
        loss_curve=series(scalars, "learning/loss"),
        eval_curve=series(scalars, "eval/avg_loss"),
        tokens_per_s=tokens_per_s * spec.resources.num_devices() if tokens_per_s else None,
        tflops_per_device=_median_after_compile(scalars, "perf/per_device_tflops_per_sec"),
        checkpoint_uri=checkpoint_uri(paths.checkpoints_dir, summary["checkpoint_step"]),
        checkpoint_step=summary["checkpoint_step"],
        checkpoint_hash=summary["checkpoint_hash"],
        num_params=report.num_params,
        flops_per_token=report.flops_per_token,
        wall_s=wall_s,
        run_dir=paths.run_dir,
        maxtext_config_path=config_path,
        tensorboard_dir=paths.tensorboard_dir,
        resumed_from_step=resumed_from,
        preflight=report.to_json(),
        wandb=summary.get("wandb"),
        maxtext_s=summary.get("maxtext_s"),
        domain_eval=summary.get("domain_eval") or {},
        eval_sets=summary.get("eval_sets") or {},
        eval_sets_missing=summary.get("eval_sets_missing") or {},
        domain_eval_error=summary.get("domain_eval_error"),
        domain_eval_s=summary.get("domain_eval_s"),
    )


def _median_after_compile(scalars: dict, tag: str) -> float | None:
    values = [v for step, v in series(scalars, tag) if step > 0]  # step 0 includes compilation
    return statistics.median(values) if values else None
