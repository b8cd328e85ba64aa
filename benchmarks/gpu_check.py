"""One prepared GPU check: the ladder's 150m architecture at seq 2048 and a tiny model, trained through Dagster
on one local GPU; prints tokens/s, MFU, goodput, peak memory vs preflight's estimate and the loss curves.

    .venv/bin/python benchmarks/gpu_check.py [--steps 300] [--batch 32] [--gpu-type h100-80gb] [--dry-run]

Run it through scripts/gpu_check.sh (environment, time limit). The data is the tests' toy grammar
(a word-level tokenizer of 257 words, so the 150m model has a 384-row vocabulary: ~86M parameters
without the 32k-vocabulary embeddings). --dry-run (any machine): builds a small mixture, plans both runs
through Dagster (preflight on the GPU type) and shows that training is refused here before launch
when no usable GPU is present; it prints no GPU figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

TARGET_MFU, TARGET_MEMORY = 0.40, 0.15
TOKENS_PER_DOC = 50  # the toy grammar's mean document length, for sizing the mixture


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from marin_assets.train.gpu_catalog import GPU_TYPES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300, help="steps of the 150m run")
    parser.add_argument("--batch", type=int, default=32, help="global batch of the 150m run (sequences of 2048)")
    parser.add_argument("--tiny-steps", type=int, default=41)
    parser.add_argument("--gpu-type", default="h100-80gb", help=f"one of {', '.join(GPU_TYPES)}")
    parser.add_argument("--root", help="storage root (default: a new temporary folder)")
    parser.add_argument("--dry-run", action="store_true", help="plan only; no GPU needed")
    args = parser.parse_args(argv)
    if args.steps < 2 or args.tiny_steps < 2:
        parser.error("--steps and --tiny-steps must be >= 2 (the first step compiles)")
    if args.batch < 1:
        parser.error("--batch must be >= 1")
    if args.gpu_type not in GPU_TYPES:
        parser.error(f"--gpu-type {args.gpu_type!r} is not in the GPU catalog; one of: {', '.join(GPU_TYPES)}")
    return args


def runs_for(args):
    from marin_assets.train.models import Budget, load_model_recipe
    from marin_assets.train.runs import TrainingRuns

    gpu = {"accelerator": "gpu", "gpu_type": args.gpu_type}
    ladder = load_model_recipe("150m").model_copy(update={"global_batch_size": args.batch,
                                                          "budget": Budget(steps=args.steps)})
    return TrainingRuns(runs={
        "gpu-150m": {"model": ladder.model_dump(mode="json"), "mixture": "gpu_check", "resources": gpu,
                     "eval": {"interval": args.steps, "steps": 4}, "checkpoint": {"period": args.steps},
                     "log_period": max(1, args.steps // 20)},
        "gpu-tiny": {"model": "tiny-0.2m", "mixture": "gpu_check", "resources": gpu, "budget": {"steps": args.tiny_steps},
                     "eval": {"interval": 20}, "checkpoint": {"period": 20}, "log_period": 5},
    })


def materialize(root: Path, runs, run_name: str, selection: list[str]):
    import dagster as dg

    from marin_assets.defs.train.definitions import build_defs
    from marin_assets_tests.local_resources import local_resources

    defs = build_defs(runs)
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["gpu_check"]))
    assets = [defs.get_assets_def("training_plan"), defs.get_assets_def("training_run"), mixture, *defs.asset_checks]
    with dg.DagsterInstance.ephemeral() as instance:
        return dg.materialize(assets, partition_key=run_name, selection=selection, raise_on_error=False,
                              instance=instance, resources=local_resources(str(root)))


def failure_of(result) -> str:
    failures = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    if not failures:
        return "unknown failure"
    error = failures[0].event_specific_data.error
    while error.cause is not None:  # Dagster's step error wraps the asset's own exception
        error = error.cause
    return error.message.strip()


def report_plan(root: Path, run_name: str) -> None:
    plan = json.loads((root / "training" / run_name / "plan" / "plan.json").read_text())["preflight"]
    memory = plan.get("memory") or {}
    print(f"  {run_name}: {plan['num_params']:,} parameters, {plan['tokens_per_step']:,} tokens/step, "
          f"{plan['flops_per_token'] / 1e9:.3f} GFLOP/token, memory estimate "
          f"{memory.get('total_bytes', 0) / 1024**3:.2f} of {memory.get('available_bytes', 0) / 1024**3:.1f} GiB, "
          f"fits: {not plan['problems']}")


def report_run(root: Path, run_name: str) -> dict:
    saved = json.loads((root / "training" / run_name / "final" / "result.json").read_text())
    eff, memory = saved["efficiency"], saved["efficiency"]["memory"]
    print(f"  {run_name}: {eff['tokens_per_s'] or 0:,.0f} tokens/s, {eff['tflops_per_device'] or 0:.1f} TFLOP/s/device, "
          f"MFU {eff['mfu'] or 0:.1%} (target >= {TARGET_MFU:.0%} for 150m), goodput {eff['goodput'] or 0:.1%}, "
          f"badput {json.dumps(eff['badput_s'])}")
    print(f"    peak memory {memory['measured_bytes'] / 1024**3:.2f} GiB ({memory['source']}) vs estimate "
          f"{memory['estimate_bytes'] / 1024**3:.2f} GiB: ratio {memory['ratio']:.3f} "
          f"(target within {TARGET_MEMORY:.0%})")
    curve = saved["loss_curve"]
    stride = max(1, len(curve) // 10)
    print("    loss curve: " + ", ".join(f"{s}:{v:.3f}" for s, v in curve[::stride] + curve[-1:]))
    return saved


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from marin_assets.train.gpu_environment import installed_versions
    from marin_assets_tests.train.mixture_fixture import build_mixture

    print("JAX packages:", json.dumps(installed_versions()))
    root = Path(args.root or tempfile.mkdtemp(prefix="marin_gpu_check-"))
    started = time.monotonic()
    tokens = args.batch * 2048 * (args.steps + 1)
    docs = 200 if args.dry_run else int(tokens / TOKENS_PER_DOC * 1.2) + 1000
    build_mixture(root, name="gpu_check", train_docs=docs, validation_docs=200, seq_len=2048)
    print(f"mixture: {docs:,} documents under {root} ({time.monotonic() - started:.1f} s)")
    runs = runs_for(args)
    print("preflight on", args.gpu_type)
    for name in ("gpu-tiny", "gpu-150m"):
        planned = materialize(root, runs, name, ["training_plan"])
        if not planned.success:
            print(f"  {name}: plan failed: {failure_of(planned)}")
            return 1
        report_plan(root, name)
    failed = 0
    for name in ("gpu-tiny", "gpu-150m"):
        if args.dry_run:  # the CPU dry path: the launcher must refuse before launching anything
            trained = materialize(root, runs, name, ["training_run"])
            print(f"  {name}: {'TRAINED (unexpected on a dry run)' if trained.success else failure_of(trained)}")
            continue
        trained = materialize(root, runs, name, ["training_run"])
        if not trained.success:
            print(f"  {name}: FAILED: {failure_of(trained)}")
            failed += 1
            continue
        report_run(root, name)
    print(f"GPU numbers: {'not measured (dry run)' if args.dry_run else 'measured above'}; "
          f"{time.monotonic() - started:.0f} s in all")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
