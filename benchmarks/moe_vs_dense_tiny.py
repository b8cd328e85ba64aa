"""Dense tiny-0.2m vs tiny MoE (tiny-moe-0.5m) at equal training compute on the test fixture's mixture, CPU.

Both runs go through Dagster (training_plan, training_run) in a temporary storage root. The MoE run
trains --moe-steps steps; the dense run trains the steps that buy the same MaxText training FLOPs
(preflight's count, which equals MaxText's). Prints each run's FLOPs, parameters and final eval loss.
Usage: .venv/bin/python benchmarks/moe_vs_dense_tiny.py [--moe-steps 41]
"""

import argparse
import json
import tempfile
from pathlib import Path

import dagster as dg

from marin_assets.defs.train.definitions import build_defs
from marin_assets.train.models import load_model_recipe
from marin_assets.train.preflight import preflight
from marin_assets.train.hardware import ResourceConfig
from marin_assets.train.runs import TrainingRuns
from marin_assets_tests.local_resources import local_resources
from marin_assets_tests.train.mixture_fixture import build_mixture

CPU = {"accelerator": "cpu", "memory_gib": 4}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--moe-steps", type=int, default=41)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="moe_vs_dense_"))
    mixture = build_mixture(root)
    vocab = mixture.tokenizer_vocab_size
    per_step = {m: preflight(load_model_recipe(m), ResourceConfig(**CPU), vocab, 1).flops_per_step
                for m in ("tiny-moe-0.5m", "tiny-0.2m")}
    dense_steps = round(args.moe_steps * per_step["tiny-moe-0.5m"] / per_step["tiny-0.2m"])
    base = {"mixture": "tiny", "eval": {}, "checkpoint": {"period": 1000}, "log_period": 5, "resources": CPU}
    runs = TrainingRuns(runs={"moe": {**base, "model": "tiny-moe-0.5m", "budget": {"steps": args.moe_steps}},
                              "dense": {**base, "model": "tiny-0.2m", "budget": {"steps": dense_steps}}})
    defs = build_defs(runs)
    assets = [defs.get_assets_def("training_plan"), defs.get_assets_def("training_run"),
              dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))]
    for name in ("moe", "dense"):
        with dg.DagsterInstance.ephemeral() as instance:
            ok = dg.materialize(assets, partition_key=name, instance=instance, raise_on_error=False,
                                resources=local_resources(str(root)), selection=["training_plan", "training_run"]).success
        res = json.loads((root / "training" / name / "final" / "result.json").read_text())
        p = res["preflight"]
        print(f"{name}: ok={ok} steps={p['steps']} total_flops={p['total_flops']:.4g} params={res['num_params']} "
              f"active={res['active_params']} final_eval_loss={res['final_eval_loss']:.4f}"
              + (f" max_expert_share={res['routing']['max_share']:.3f}" if res.get("routing") else ""))
    print(f"storage: {root}")


if __name__ == "__main__":
    main()
