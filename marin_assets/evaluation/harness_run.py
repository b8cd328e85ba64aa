"""Run one task set through lm-evaluation-harness and summarize it: accuracy, continuous metrics, baselines.

The harness does the evaluation (task YAMLs, requests, its `acc`); this module writes the task set's
generated task YAMLs (one per verified data file, `include:` of the set's task_yaml), calls
`lm_eval.simple_evaluate` with the set's few-shot count and limit, and reads the per-item samples
the harness logs to add what it does not aggregate for multiple-choice tasks:
- correct_logprob: log-probability of the correct choice (summed over its tokens);
- correct_prob_norm: its probability normalised over the choices, softmax(lls)[gold] (DataDecide's
  continuous metric, which separates small models before accuracy does);
- bpb: bits per UTF-8 byte of the correct continuation, -sum(ll) / (ln 2 x bytes);
- ties: items whose choices all get the same log-likelihood (the harness then picks choice 0, which
  is BLiMP's correct one: a model that cannot tell the sentences apart scores 1.0 on them, so ties
  are counted, never hidden);
- random: the chance accuracy, mean over items of 1 / number of choices; centred accuracy
  (acc - random) / (1 - random), as the OLMo ladder and DataDecide report it.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict

import numpy as np
import yaml

from marin_assets.evaluation.task_sets import TaskSetSpec, task_categories, verified_files

METRICS = ("acc", "correct_logprob", "correct_prob_norm", "bpb")
OVERALL = "overall"


def write_task_yamls(spec: TaskSetSpec, paths: dict[str, str], folder: str) -> list[str]:
    """One harness task YAML per data file into `folder`; the harness task names, sorted."""
    os.makedirs(folder, exist_ok=True)
    names = []
    for file_name, path in sorted(paths.items()):
        task = spec.task_name(file_name)
        body = {"include": spec.task_yaml, "task": task, "dataset_kwargs": {"data_files": {"train": path}}}
        with open(os.path.join(folder, f"{task}.yaml"), "w") as f:
            yaml.safe_dump(body, f, sort_keys=True)
        names.append(task)
    return names


def run_harness(lm, spec: TaskSetSpec, work_dir: str) -> tuple[dict, dict]:
    """(harness results per task, logged samples per task) of `lm` on every task of the set."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    paths = verified_files(spec)
    folder = os.path.join(work_dir, "harness_tasks")
    tasks = write_task_yamls(spec, paths, folder)
    manager = TaskManager(include_path=folder, include_defaults=False)
    out = simple_evaluate(model=lm, tasks=tasks, num_fewshot=spec.num_fewshot, limit=spec.limit,
                          task_manager=manager, log_samples=True, bootstrap_iters=0,
                          random_seed=0, numpy_random_seed=0, torch_random_seed=None, fewshot_random_seed=0)
    return out["results"], out["samples"]


def item_metrics(sample: dict) -> dict[str, float]:
    """acc and the continuous metrics of one multiple-choice item from the harness's logged sample."""
    lls = np.array([float(r[0]) for r in sample["filtered_resps"]])
    gold = int(sample["target"])
    continuation = sample["arguments"][gold][1]
    probs = np.exp(lls - lls.max())
    return {"acc": float(sample["acc"]), "correct_logprob": float(lls[gold]), "tie": float(np.all(lls == lls[0])),
            "correct_prob_norm": float(probs[gold] / probs.sum()),
            "nats": float(-lls[gold]), "bytes": float(len(continuation.encode("utf-8"))),
            "random": 1.0 / len(lls)}


def _aggregate(items: list[dict[str, float]]) -> dict[str, float]:
    mean = lambda key: float(np.mean([i[key] for i in items]))
    random = mean("random")
    acc = mean("acc")
    nats, size = sum(i["nats"] for i in items), sum(i["bytes"] for i in items)
    return {"acc": acc, "correct_logprob": mean("correct_logprob"), "correct_prob_norm": mean("correct_prob_norm"),
            "bpb": nats / (math.log(2) * size) if size else float("nan"), "random": random,
            "centered_acc": (acc - random) / (1 - random) if random < 1 else float("nan"), "items": len(items),
            # items whose choices all score the same: the harness's argmax then picks the first choice
            "ties": int(sum(i["tie"] for i in items))}


def summarize(spec: TaskSetSpec, results: dict, samples: dict) -> dict:
    """Per task, per category (mean over its tasks) and overall (mean over tasks, as BLiMP reports), + baselines."""
    categories = task_categories(spec, verified_files(spec))
    per_task = {}
    for task in sorted(samples):
        items = [item_metrics(s) for s in samples[task]]
        per_task[task] = _aggregate(items)
        harness_acc = results[task].get("acc,none")
        if harness_acc is not None and abs(harness_acc - per_task[task]["acc"]) > 1e-9:
            raise ValueError(f"{task}: the harness's acc {harness_acc} differs from its samples' {per_task[task]['acc']}")
    by_category: dict[str, list[str]] = defaultdict(list)
    for task in per_task:
        by_category[categories.get(task, OVERALL)].append(task)
    mean_of = lambda tasks: {**{k: float(np.mean([per_task[t][k] for t in tasks]))
                                for k in ("acc", "correct_logprob", "correct_prob_norm", "bpb", "random", "centered_acc")},
                             "items": int(sum(per_task[t]["items"] for t in tasks)),
                             "ties": int(sum(per_task[t]["ties"] for t in tasks)), "tasks": len(tasks)}
    return {"task_set": spec.name, "overall": mean_of(list(per_task)),
            "categories": {c: mean_of(ts) for c, ts in sorted(by_category.items())} if categories else {},
            "tasks": per_task, "baselines": dict(spec.baselines), "num_fewshot": spec.num_fewshot, "limit": spec.limit}
