"""Sentences/s of the lm-evaluation-harness adapter vs the same forward pass on pre-tokenized batches.

    .venv/bin/python benchmarks/eval_adapter_throughput.py RUN_DIR [--pairs N] [--rounds R] [--full]

Both sides score the same BLiMP sentences (the first N pairs of every paradigm of ../shared/datasets/blimp,
as the harness requests them: continuation " <sentence>" after an empty context) with the same
CheckpointModel, batch size and bucketed lengths. "direct": the rows tokenized beforehand, sorted by
length, then only `token_scores` timed. "adapter": CheckpointLM.loglikelihood on harness Instances
(tokenization, sorting, batching and result handling included). Target: adapter >= 0.8x direct.
`--full`: also the wall time of the full BLiMP task set through the harness (evaluation.evaluate_run).
Each side runs once untimed first, so both are measured with their programs compiled; then R rounds
alternate direct and adapter (so a load change on a shared machine hits both), and the median of the
per-round ratios is reported with the 1-minute load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

from lm_eval.api.instance import Instance

from marin_assets.evaluation.harness_model import CheckpointLM
from marin_assets.evaluation.task_sets import load_task_sets, verified_files
from marin_assets.train.checkpoint_model import CheckpointModel


def blimp_sentences(pairs: int) -> list[str]:
    spec = load_task_sets().get("blimp")
    sentences = []
    for path in verified_files(spec).values():
        with open(path) as f:
            for line in f.readlines()[:pairs]:
                item = json.loads(line)
                sentences += [item["sentence_good"], item["sentence_bad"]]
    return sentences


CPU_SECONDS: dict[str, float] = {}  # process CPU time (all threads) of the last call of each side


def direct(model: CheckpointModel, rows: list[list[int]], batch: int) -> float:
    rows = sorted(rows, key=len, reverse=True)
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(rows), batch):
        model.token_scores(rows[i:i + batch], batch_rows=batch)
    CPU_SECONDS["direct"] = time.process_time() - cpu
    return time.perf_counter() - started


def adapter(lm: CheckpointLM, sentences: list[str]) -> float:
    requests = [Instance("loglikelihood", {}, ("", " " + s), i) for i, s in enumerate(sentences)]
    started, cpu = time.perf_counter(), time.process_time()
    lm.loglikelihood(requests)
    CPU_SECONDS["adapter"] = time.process_time() - cpu
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run_dir")
    parser.add_argument("--pairs", type=int, default=100, help="pairs per paradigm (1000 = all of BLiMP)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5, help="alternating direct/adapter rounds (median reported)")
    parser.add_argument("--full", action="store_true", help="also time the full BLiMP evaluation through the harness")
    args = parser.parse_args()
    model = CheckpointModel.load(args.run_dir)
    lm = CheckpointLM(model, batch_size=args.batch)
    sentences = blimp_sentences(args.pairs)
    rows = [[model.tokenizer.bos_id, *ids] for ids in model.tokenizer.encode([" " + s for s in sentences])]
    direct(model, rows, args.batch), adapter(lm, sentences[:args.batch * 4])  # compile every bucket once
    n, load_before = len(sentences), os.getloadavg()[0]
    print(f"model: {args.run_dir} step {model.step}; {n} sentences, batch {args.batch}, {args.rounds} rounds")
    ratios, direct_rates, cpu_ratios, direct_cpu = [], [], [], []
    for round_ in range(args.rounds):
        direct_s, adapter_s = direct(model, rows, args.batch), adapter(lm, sentences)
        ratios.append(direct_s / adapter_s), direct_rates.append(n / direct_s)
        cpu_ratios.append(CPU_SECONDS["direct"] / CPU_SECONDS["adapter"]), direct_cpu.append(CPU_SECONDS["direct"])
        started = time.perf_counter()  # what the adapter must do that the direct side was given
        model.tokenizer.encode([" " + s for s in sentences])
        print(f"round {round_ + 1}: direct {n / direct_s:,.0f} sentences/s ({direct_s:.2f} s), "
              f"adapter {n / adapter_s:,.0f} sentences/s ({adapter_s:.2f} s), ratio {ratios[-1]:.2f}x; "
              f"tokenizing alone {time.perf_counter() - started:.2f} s; CPU seconds direct {CPU_SECONDS['direct']:.2f}, "
              f"adapter {CPU_SECONDS['adapter']:.2f} (ratio {cpu_ratios[-1]:.2f}x)")
    print(f"median ratio adapter/direct: {statistics.median(ratios):.2f}x over {args.rounds} rounds (target >= 0.8x); "
          f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; median CPU-time ratio "
          f"{statistics.median(cpu_ratios):.2f}x (less sensitive to other processes than wall time)")
    if args.full:
        from marin_assets.evaluation.evaluate_run import evaluate

        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
        with tempfile.TemporaryDirectory() as out:
            started, cpu = time.perf_counter(), time.process_time()
            summary = evaluate(args.run_dir, load_task_sets().get("blimp"), out, batch_size=args.batch)
            print(f"full BLiMP through the harness: {summary['overall']['items']} pairs in "
                  f"{time.perf_counter() - started:.1f} s wall (model load {summary['load_s']} s, evaluation "
                  f"{summary['eval_s']} s; the forward pass alone at the direct rate: {2 * summary['overall']['items'] / statistics.median(direct_rates):.0f} s), "
                  f"acc {summary['overall']['acc']:.4f}, load average {os.getloadavg()[0]:.1f}")
            forward_cpu = statistics.median(direct_cpu) * 2 * summary["overall"]["items"] / n
            print(f"CPU seconds (all threads): full evaluation {time.process_time() - cpu:.0f} s, of which the forward "
                  f"pass alone would take {forward_cpu:.0f} s at the direct side's CPU cost per sentence")


if __name__ == "__main__":
    main()
