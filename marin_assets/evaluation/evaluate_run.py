"""`python -m marin_assets.evaluation.evaluate_run RUN_DIR TASK_SET OUT_DIR`: one run's checkpoint on one task set.

TASK_SET is a registered task set's name, or a JSON file holding one task set's entry (paths resolved;
what the downstream_eval asset passes, so the child evaluates exactly the entry the asset verified).

Runs in its own process (the downstream_eval asset starts it), so JAX, MaxText and the harness are
loaded there and their memory returns when it exits. Writes OUT_DIR/summary.json (harness_run.summarize)
and OUT_DIR/harness_results.json (the harness's own per-task results), and prints the wall times.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from marin_assets.evaluation.harness_run import run_harness, summarize
from marin_assets.evaluation.task_sets import TaskSetSpec, load_task_sets, verified_files

SUMMARY, HARNESS_RESULTS = "summary.json", "harness_results.json"


def task_set_spec(task_set: str) -> TaskSetSpec:
    if task_set.endswith(".json"):
        with open(task_set) as f:
            return TaskSetSpec.model_validate_json(f.read())
    return load_task_sets().get(task_set)


def evaluate(run_dir: str, spec: TaskSetSpec, out_dir: str, step: int | None = None, batch_size: int = 64) -> dict:
    from marin_assets.evaluation.harness_model import CheckpointLM
    from marin_assets.train.checkpoint_model import CheckpointModel

    verified_files(spec)  # refuse missing or changed data before loading any model
    started = time.perf_counter()
    model = CheckpointModel.load(run_dir, step=step)
    loaded = time.perf_counter()
    results, samples = run_harness(CheckpointLM(model, batch_size=batch_size), spec, out_dir)
    summary = summarize(spec, results, samples)
    summary.update(checkpoint_step=model.step, checkpoint_dir=model.checkpoint_dir,
                   load_s=round(loaded - started, 2), eval_s=round(time.perf_counter() - loaded, 2))
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, SUMMARY), "w") as f:
        json.dump(summary, f, indent=2, sort_keys=True)
    with open(os.path.join(out_dir, HARNESS_RESULTS), "w") as f:
        json.dump(results, f, indent=2, sort_keys=True, default=str)
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("task_set")
    parser.add_argument("out_dir")
    parser.add_argument("--step", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args(argv)
    summary = evaluate(args.run_dir, task_set_spec(args.task_set), args.out_dir, args.step, args.batch_size)
    overall = summary["overall"]
    print(f"{summary['task_set']}: acc {overall['acc']:.4f} over {overall['items']} items "
          f"(load {summary['load_s']} s, eval {summary['eval_s']} s)")


if __name__ == "__main__":
    main()
