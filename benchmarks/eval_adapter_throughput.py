"""Sentences/s of the lm-evaluation-harness adapter vs the same forward pass on pre-tokenized batches.

    .venv/bin/python benchmarks/eval_adapter_throughput.py RUN_DIR [--pairs N] [--full]

Both sides score the same BLiMP sentences (the first N pairs of every paradigm of ../shared/datasets/blimp,
as the harness requests them: continuation " <sentence>" after an empty context) with the same
CheckpointModel, batch size and bucketed lengths. "direct": the rows tokenized beforehand, sorted by
length, then only `token_scores` timed. "adapter": CheckpointLM.loglikelihood on harness Instances
(tokenization, sorting, batching and result handling included). Target: adapter >= 0.8x direct.
`--full`: also the wall time of the full BLiMP task set through the harness (evaluation.evaluate_run).
Each side runs once untimed first, so both are measured with their programs compiled.
"""

from __future__ import annotations

import argparse
import json
import os
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


def direct(model: CheckpointModel, rows: list[list[int]], batch: int) -> float:
    rows = sorted(rows, key=len, reverse=True)
    started = time.perf_counter()
    for i in range(0, len(rows), batch):
        model.token_scores(rows[i:i + batch], batch_rows=batch)
    return time.perf_counter() - started


def adapter(lm: CheckpointLM, sentences: list[str]) -> float:
    requests = [Instance("loglikelihood", {}, ("", " " + s), i) for i, s in enumerate(sentences)]
    started = time.perf_counter()
    lm.loglikelihood(requests)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run_dir")
    parser.add_argument("--pairs", type=int, default=100, help="pairs per paradigm (1000 = all of BLiMP)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--full", action="store_true", help="also time the full BLiMP evaluation through the harness")
    args = parser.parse_args()
    model = CheckpointModel.load(args.run_dir)
    lm = CheckpointLM(model, batch_size=args.batch)
    sentences = blimp_sentences(args.pairs)
    rows = [[model.tokenizer.bos_id, *ids] for ids in model.tokenizer.encode([" " + s for s in sentences])]
    direct(model, rows, args.batch), adapter(lm, sentences[:args.batch * 4])  # compile every bucket once
    direct_s, adapter_s = direct(model, rows, args.batch), adapter(lm, sentences)
    n = len(sentences)
    print(f"model: {args.run_dir} step {model.step}; {n} sentences, batch {args.batch}")
    print(f"direct forward pass: {n / direct_s:,.0f} sentences/s ({direct_s:.2f} s)")
    print(f"harness adapter:     {n / adapter_s:,.0f} sentences/s ({adapter_s:.2f} s)")
    print(f"ratio adapter/direct: {direct_s / adapter_s:.2f}x (target >= 0.8x)")
    if args.full:
        from marin_assets.evaluation.evaluate_run import evaluate

        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
        with tempfile.TemporaryDirectory() as out:
            started = time.perf_counter()
            summary = evaluate(args.run_dir, load_task_sets().get("blimp"), out, batch_size=args.batch)
            print(f"full BLiMP through the harness: {summary['overall']['items']} pairs in "
                  f"{time.perf_counter() - started:.1f} s wall (model load {summary['load_s']} s), "
                  f"acc {summary['overall']['acc']:.4f}")


if __name__ == "__main__":
    main()
