"""What a finished run reports: its TrainingResult, read from its TensorBoard scalars and the
training process' summary.

Together with the MaxText config, the entry, the checkpoint code and the device setup (resources),
this decides a run's numbers, so it is part of the training assets' code version; how the process
is launched and watched (local_launcher, k8s) is not: editing that does not make trained runs stale.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field

from marin_assets.train.attempt_timeline import read_attempts
from marin_assets.train.checkpoints import checkpoint_uri
from marin_assets.train.efficiency import goodput, memory_check, mfu
from marin_assets.train.maxtext_config import RunPaths
from marin_assets.train.memory_model import load_efficiency_recipe, process_estimate_bytes
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
    damaged_checkpoints: dict = field(default_factory=dict)  # {step: where the trainer set it aside}
    preflight: dict = field(default_factory=dict)
    wandb: dict | None = None  # wandb_tracking.finish_run() of the training process
    maxtext_s: float | None = None  # of wall_s, the time spent importing and running MaxText itself
    exit_s: float | None = None  # of wall_s, the training process' exit (JAX teardown) after it reported
    domain_eval: dict = field(default_factory=dict)  # {source or eval set: {loss, tokens}} of the final checkpoint
    eval_sets: dict = field(default_factory=dict)  # {eval set: {documents, tokens, bytes}} of its raw text
    eval_sets_missing: dict = field(default_factory=dict)  # {eval set: why it was not evaluated}
    domain_eval_error: str | None = None
    domain_eval_s: float | None = None  # of wall_s, the per-domain evaluation after training
    architecture: dict = field(default_factory=dict)  # the registered block and its MoE settings
    quantization: str = "none"
    active_params: int | None = None  # parameters a token passes through (MoE: top-k experts)
    moe_lb_loss_curve: list[tuple[int, float]] = field(default_factory=list)  # MaxText learning/moe_lb_loss
    routing: dict = field(default_factory=dict)  # routing_stats.measure: per-layer expert shares, dropped fraction
    routing_error: str | None = None
    efficiency: dict = field(default_factory=dict)  # efficiency_summary(): MFU, goodput, badput, memory

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
    waiting_s: float = 0.0,
) -> TrainingResult:
    scalars = read_scalars(paths.tensorboard_dir)
    final = spec.final_step
    eval_loss = scalars.get("eval/avg_loss", {}).get(final)
    if eval_loss is None:
        raise TrainingError(f"{spec.run_name}: no eval loss after the last step {final} in {paths.tensorboard_dir}")
    tokens_per_s = _median_after_compile(scalars, "perf/per_device_tokens_per_sec")
    tflops = _median_after_compile(scalars, "perf/per_device_tflops_per_sec")
    total_tokens_per_s = tokens_per_s * spec.resources.num_devices() if tokens_per_s else None
    efficiency = efficiency_summary(spec, paths, report, summary, tflops, total_tokens_per_s, waiting_s)
    return TrainingResult(
        final_eval_loss=eval_loss,
        eval_tokens=scalars.get("eval/total_weights", {}).get(final, 0.0),
        loss_curve=series(scalars, "learning/loss"),
        eval_curve=series(scalars, "eval/avg_loss"),
        tokens_per_s=total_tokens_per_s,
        tflops_per_device=tflops,
        checkpoint_uri=checkpoint_uri(paths.checkpoints_dir, summary["checkpoint_step"]),
        checkpoint_step=summary["checkpoint_step"],
        checkpoint_hash=summary["checkpoint_hash"],
        num_params=report.num_params,
        flops_per_token=report.flops_per_token,
        wall_s=wall_s,
        run_dir=paths.run_dir,
        maxtext_config_path=config_path,
        tensorboard_dir=paths.tensorboard_dir,
        # the trainer's word where it gave one: it sets damaged checkpoints aside before resuming
        resumed_from_step=summary["resumed_from_step"] if "resumed_from_step" in summary else resumed_from,
        damaged_checkpoints=summary.get("damaged_checkpoints") or {},
        preflight=report.to_json(),
        wandb=summary.get("wandb"),
        maxtext_s=summary.get("maxtext_s"),
        domain_eval=summary.get("domain_eval") or {},
        eval_sets=summary.get("eval_sets") or {},
        eval_sets_missing=summary.get("eval_sets_missing") or {},
        domain_eval_error=summary.get("domain_eval_error"),
        domain_eval_s=summary.get("domain_eval_s"),
        routing=summary.get("routing") or {},
        routing_error=summary.get("routing_error"),
        architecture=spec.model.architecture.describe(),
        quantization=spec.resolved_quantization,
        active_params=report.active_params,
        # MaxText logs the load-balancing loss (mean over MoE layers) every step; 0 for a dense block
        moe_lb_loss_curve=(series(scalars, "learning/moe_lb_loss") if spec.model.architecture.is_moe
                           else []),
        efficiency=efficiency,
    )


def efficiency_summary(spec: TrainingRunSpec, paths: RunPaths, report: PreflightReport, summary: dict,
                       tflops_per_device: float | None, tokens_per_s: float | None, waiting_s: float) -> dict:
    """MFU against the catalog's peak (CPU: the machine's measured matmul peak), goodput, memory vs estimate."""
    res = spec.resources
    if res.peak_tflops_per_device:
        peak, per, source = res.peak_tflops_per_device, "device", f"catalog: {res.gpu_type or res.tpu_type} bf16 dense"
    elif summary.get("cpu_peak"):
        cpu = summary["cpu_peak"]
        peak, per, source = cpu["tflops"], "machine", f"measured {cpu['method']} on {cpu['machine']} ({cpu['measured_at']})"
    else:
        peak, per, source = None, "device", "no peak known for this accelerator"
    per_device = report.memory.total_bytes if report.memory else None
    tolerance = load_efficiency_recipe().memory_tolerance
    estimate = process_estimate_bytes(per_device, res, moe=spec.model.architecture.is_moe)
    memory = memory_check(summary.get("peak_memory_bytes"), estimate, tolerance)
    memory["source"] = summary.get("peak_memory_source")
    return {
        "tokens_per_s": tokens_per_s,
        "tflops_per_device": tflops_per_device,
        "peak_tflops": peak,
        "peak_per": per,
        "peak_source": source,
        "mfu": mfu(tflops_per_device, res.num_devices(), peak, per),
        **goodput(read_attempts(paths.run_dir), waiting_s),
        "memory": memory,
    }


def _median_after_compile(scalars: dict, tag: str) -> float | None:
    values = [v for step, v in series(scalars, tag) if step > 0]  # step 0 includes compilation
    return statistics.median(values) if values else None
