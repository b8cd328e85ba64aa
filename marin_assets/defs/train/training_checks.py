"""Checks of the training stage: a blocking preflight on the plan, a loss-curve baseline and MoE routing balance on the run."""

from pathlib import Path

import dagster as dg

from marin_assets.core import layout
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.train import routing_stats
from marin_assets.train.baseline import baseline_path, compare, load_baseline
from marin_assets.train.runs import TrainingRuns


def build_training_checks(
    training_plan: dg.AssetsDefinition, training_run: dg.AssetsDefinition, baselines_dir: Path | None = None,
    runs: TrainingRuns | None = None,
) -> list[dg.AssetChecksDefinition]:
    partitions = training_plan.partitions_def
    declared = {name for name in (runs.runs if runs else {}) if runs.spec(name).baseline}

    @dg.asset_check(
        asset=training_plan, name="preflight_fits", blocking=True, partitions_def=partitions,
        description="The run fits the accelerator's memory and its mesh divides the devices; "
                    "a failure stops training_run and names the knob to change.",
    )
    def preflight_fits(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
        plan = storage.storage.read_json(layout.TRAINING, context.partition_key, layout.PLAN_DIR, "plan.json")
        report = plan["preflight"]
        memory = report.get("memory") or {}
        return dg.AssetCheckResult(
            passed=not report["problems"],
            description="; ".join(report["problems"]) or "fits",
            metadata={
                "memory_per_device_gib": round(memory.get("total_bytes", 0) / 1024**3, 4),
                "num_devices": report["num_devices"],
                "num_params": report["num_params"],
            },
        )

    @dg.asset_check(
        asset=training_run, name="loss_matches_baseline", blocking=True, partitions_def=partitions,
        description="The run's loss curve and final eval loss stay within the committed baseline's tolerance "
                    "(recipes/training/baselines/<run>.json); a run that declares a baseline fails without one. "
                    "Blocking, so the nightly validation run fails with it.",
    )
    def loss_matches_baseline(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
        run = context.partition_key
        baseline = load_baseline(run, baselines_dir)
        if baseline is None:
            return missing_baseline_result(run, declared=run in declared, path=baseline_path(run, baselines_dir))
        result = storage.storage.read_json(layout.TRAINING, run, layout.FINAL_DIR, "result.json")
        comparison = compare(result["loss_curve"], result["final_eval_loss"], baseline)
        return dg.AssetCheckResult(
            passed=comparison.passed,
            description=comparison.message,
            metadata={
                "max_abs_diff": comparison.max_abs_diff,
                "compared_steps": comparison.compared_steps,
                "tolerance": float(baseline.get("tolerance", 0)),
            },
        )

    @dg.asset_check(
        asset=training_run, name="routing_balanced", blocking=False, partitions_def=partitions,
        description="MoE runs: no expert takes more than the recipe's architecture.max_expert_share of the routed "
                    "tokens in any layer (routing collapse); dense runs pass with nothing to check.",
    )
    def routing_balanced(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
        result = storage.storage.read_json(layout.TRAINING, context.partition_key, layout.FINAL_DIR, "result.json")
        return routing_check_result(result)

    @dg.asset_check(
        asset=training_run, name="memory_estimate_close", partitions_def=partitions,
        description="The trainer's measured peak memory (GPU/TPU: the device's peak_bytes_in_use; CPU: the "
                    "process' peak RSS) is within recipes/training/efficiency.yaml memory_tolerance of preflight's "
                    "estimate; warns otherwise (the memory model needs correcting before a larger run relies on it).",
    )
    def memory_estimate_close(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
        result = storage.storage.read_json(layout.TRAINING, context.partition_key, layout.FINAL_DIR, "result.json")
        return memory_check_result((result.get("efficiency") or {}).get("memory") or {})

    return [preflight_fits, loss_matches_baseline, routing_balanced, memory_estimate_close]


def routing_check_result(result: dict) -> dg.AssetCheckResult:
    """Fails when one expert takes more than max_expert_share in a layer, or when routing was not measured."""
    arch = result.get("architecture") or {}
    if not arch.get("num_experts"):
        return dg.AssetCheckResult(passed=True, description="dense architecture: no routing")
    stats, limit = result.get("routing") or {}, arch["max_expert_share"]
    if not stats:
        return dg.AssetCheckResult(passed=False, description=f"routing was not measured: {result.get('routing_error')}")
    collapsed = routing_stats.collapsed_layers(stats, limit)
    return dg.AssetCheckResult(
        passed=not collapsed,
        description="; ".join(collapsed) + f" (limit {limit:.0%})" if collapsed else f"every expert <= {limit:.0%}",
        metadata={"max_share": stats["max_share"], "limit": limit},
    )


def memory_check_result(memory: dict) -> dg.AssetCheckResult:
    measured, estimate, ratio = memory.get("measured_bytes"), memory.get("estimate_bytes"), memory.get("ratio")
    if ratio is None:
        return dg.AssetCheckResult(passed=True, severity=dg.AssetCheckSeverity.WARN,
                                   description="peak memory was not measured for this run", metadata={"measured": "none"})
    text = (f"measured {measured / 1024**3:.3f} GiB vs estimated {estimate / 1024**3:.3f} GiB "
            f"(ratio {ratio:.3f}, tolerance {memory['tolerance']:.0%}; {memory.get('source')})")
    return dg.AssetCheckResult(
        passed=bool(memory["within"]), severity=dg.AssetCheckSeverity.WARN,
        description=text if memory["within"] else f"memory estimate off: {text}; correct train/memory_model.py or preflight",
        metadata={"measured_gib": measured / 1024**3, "estimate_gib": estimate / 1024**3, "ratio": ratio,
                  "tolerance": memory["tolerance"]},
    )


def missing_baseline_result(run: str, *, declared: bool, path: Path) -> dg.AssetCheckResult:
    """No baseline file: a failure when the run declares one (runs.yaml `baseline: true`), else a plain note."""
    refresh = f"`marin baseline refresh {run}` writes it from the run's result"
    if declared:
        return dg.AssetCheckResult(
            passed=False, severity=dg.AssetCheckSeverity.ERROR,
            description=f"no baseline: run {run!r} declares one (baseline: true) but {path} does not exist; {refresh}",
            metadata={"baseline": "missing", "expected_at": str(path)},
        )
    return dg.AssetCheckResult(
        passed=True, severity=dg.AssetCheckSeverity.WARN,
        description=f"no baseline: run {run!r} declares none, so its loss curve was not compared ({refresh})",
        metadata={"baseline": "none"},
    )
