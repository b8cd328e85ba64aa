"""A scaling suite's BLiMP table next to the published baselines: every trained run of the suite evaluated
through lm-evaluation-harness (the `marin_checkpoint` adapter), read-only over the suite's storage.

    .venv/bin/python benchmarks/blimp_suite_table.py STORAGE_ROOT [--suite cpu_suite] [--limit N] [--out DIR]

STORAGE_ROOT is a storage folder (e.g. a quickstart's .marin/storage): the runs are its committed
scaling/<suite>/runs/*/result.json and the held-out run (scaling/<suite>/heldout/run), each evaluated from
the checkpoint its result.json names, in its own process (evaluation.evaluate_run), into OUT/<run>/
(an existing OUT/<run>/summary.json of the same limit is reused, so an interrupted table resumes).
`--limit N` evaluates the first N pairs of each of the 67 paradigms (the full set is 1,000 each); the
table says which. Prints one row per run (N, D, C, final eval loss, acc, centred acc, log-prob of the
correct sentence, its normalised probability, ties), then the published baselines and chance, and
writes the same table to OUT/table.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from marin_assets.evaluation.evaluate_run import SUMMARY
from marin_assets.evaluation.task_sets import load_task_sets

TASK_SET = "blimp"


def suite_runs(storage: Path, suite: str) -> list[dict]:
    """(name, result.json) of every committed run of the suite, the held-out run last."""
    root = storage / "scaling" / suite
    folders = sorted(p for p in (root / "runs").glob("*") if (p / "_COMMITTED").exists())
    if (root / "heldout" / "run" / "_COMMITTED").exists():
        folders.append(root / "heldout" / "run")
    runs = []
    for folder in folders:
        result = json.loads((folder / "result.json").read_text())
        name = "heldout " + result["run"] if folder.parent.name == "heldout" else folder.name
        runs.append({"name": name, "result": result})
    return runs


def run_folder(result: dict) -> str:
    """The training run folder holding the checkpoint result.json names (<run>/checkpoints/<step>)."""
    return str(Path(result["checkpoint_uri"]).parent.parent)


def evaluate(run: dict, spec_file: Path, out: Path, limit: int | None) -> dict:
    summary_path = out / SUMMARY
    if summary_path.exists():
        summary = json.loads(summary_path.read_text())
        if summary.get("limit") == limit:
            return summary
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1"}
    subprocess.run([sys.executable, "-m", "marin_assets.evaluation.evaluate_run", run_folder(run["result"]),
                    str(spec_file), str(out)], check=True, env=env, stdout=subprocess.DEVNULL)
    return json.loads(summary_path.read_text())


def table(runs: list[dict], summaries: list[dict], baselines: dict[str, float]) -> pd.DataFrame:
    rows = []
    for run, summary in zip(runs, summaries):
        result, overall = run["result"], summary["overall"]
        rows.append({"run": run["name"], "N": result["N"], "D": result["D"], "C": result["C"],
                     "loss": result.get("final_eval_loss"), "acc": overall["acc"],
                     "centered_acc": overall["centered_acc"], "correct_logprob": overall["correct_logprob"],
                     "correct_prob_norm": overall["correct_prob_norm"], "ties": overall["ties"],
                     "pairs": overall["items"], "eval_s": summary.get("eval_s")})
    for model, acc in baselines.items():  # published, full BLiMP (Warstadt et al. 2020, Table 3)
        rows.append({"run": f"published: {model}", "acc": acc, "centered_acc": (acc - 0.5) / 0.5})
    rows.append({"run": "chance", "acc": 0.5, "centered_acc": 0.0})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("storage", type=Path)
    parser.add_argument("--suite", default="cpu_suite")
    parser.add_argument("--limit", type=int, default=None, help="pairs per paradigm (default: all 1,000)")
    parser.add_argument("--out", type=Path, default=Path("blimp_suite_eval"))
    args = parser.parse_args()
    spec = load_task_sets().get(TASK_SET).model_copy(update={"limit": args.limit})
    runs = suite_runs(args.storage, args.suite)
    if not runs:
        raise SystemExit(f"{args.storage}/scaling/{args.suite}/runs: no committed run")
    args.out.mkdir(parents=True, exist_ok=True)
    spec_file = args.out / "task_set.json"
    spec_file.write_text(spec.model_dump_json())
    summaries = []
    for run in runs:
        summaries.append(evaluate(run, spec_file, args.out / run["name"].replace(" ", "_"), args.limit))
        print(f"{run['name']}: acc {summaries[-1]['overall']['acc']:.4f} ({summaries[-1].get('eval_s')} s)", flush=True)
    frame = table(runs, summaries, spec.baselines)
    scope = "full BLiMP (67 x 1,000 pairs)" if args.limit is None else f"BLiMP, first {args.limit} pairs of each of 67 paradigms"
    text = (f"Suite {args.suite} on {scope}; published baselines are on the full set.\n\n"
            + frame.to_markdown(index=False, floatfmt=".4g"))
    (args.out / "table.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
