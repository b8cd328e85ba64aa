"""Small-scale validation: a tiny run's loss curve against a committed baseline.

A baseline is `recipes/training/baselines/<run>.json` ({"loss_curve": [[step, loss], ...],
"final_eval_loss": x, "tolerance": t}). A change that breaks training numerics (data order, LR
schedule, model code, MaxText upgrade) moves the curve by more than the tolerance and fails CI.

A run declares that it has one with `baseline: true` in runs.yaml; loss_matches_baseline then fails
when the file is missing. Regenerate after an intended change (then commit the file):

    marin baseline refresh <run> [--storage-root ROOT] [--out FILE] [--tolerance 0.05]

which copies the curve from the run's committed `training/<run>/final/result.json`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from marin_assets.core import layout
from marin_assets.core.recipes import recipes_dir
from marin_assets.core.storage import Storage

BASELINES_DIR = "training/baselines"
DEFAULT_TOLERANCE = 0.05  # nats/token: CPU float32 differs across machines by far less


@dataclass(frozen=True)
class BaselineComparison:
    passed: bool
    max_abs_diff: float
    worst_step: int | None
    compared_steps: int
    message: str


def compare(loss_curve: list[tuple[int, float]], final_eval_loss: float, baseline: dict) -> BaselineComparison:
    expected = {int(s): float(v) for s, v in baseline["loss_curve"]}
    actual = {int(s): float(v) for s, v in loss_curve}
    tolerance = float(baseline.get("tolerance", DEFAULT_TOLERANCE))
    missing = sorted(set(expected) - set(actual))
    if missing:
        return BaselineComparison(False, float("inf"), missing[0], 0, f"steps missing from the run: {missing[:10]}")
    diffs = {s: abs(actual[s] - v) for s, v in expected.items()}
    diffs[-1] = abs(final_eval_loss - float(baseline["final_eval_loss"]))  # -1 = the final eval
    worst = max(diffs, key=diffs.get)
    ok = diffs[worst] <= tolerance
    where = "final eval" if worst == -1 else f"step {worst}"
    return BaselineComparison(
        passed=ok,
        max_abs_diff=diffs[worst],
        worst_step=worst,
        compared_steps=len(expected),
        message=f"max |loss - baseline| = {diffs[worst]:.4f} at {where} (tolerance {tolerance})",
    )


def baseline_path(run_name: str, directory: Path | None = None) -> Path:
    return (directory or recipes_dir() / BASELINES_DIR) / f"{run_name}.json"


def load_baseline(run_name: str, directory: Path | None = None) -> dict | None:
    path = baseline_path(run_name, directory)
    return json.loads(path.read_text()) if path.exists() else None


def baseline_from_result(result: dict, tolerance: float = DEFAULT_TOLERANCE) -> dict:
    return {
        "loss_curve": [[int(s), round(float(v), 6)] for s, v in result["loss_curve"]],
        "final_eval_loss": round(float(result["final_eval_loss"]), 6),
        "checkpoint_hash": result["checkpoint_hash"],
        "tolerance": tolerance,
    }


def format_baseline(baseline: dict) -> str:
    """JSON with one [step, loss] pair per line, so a regenerated baseline diffs readably."""
    curve = ",\n".join(f"  [{s}, {v}]" for s, v in baseline["loss_curve"])
    rest = {k: v for k, v in baseline.items() if k != "loss_curve"}
    head = json.dumps(rest, indent=1, sort_keys=True)[:-2]
    return f'{head},\n "loss_curve": [\n{curve}\n ]\n}}\n'


def refresh_baseline(storage: Storage, run_name: str, out: Path | None = None,
                     tolerance: float = DEFAULT_TOLERANCE) -> Path:
    """Write the baseline of `run_name` from its committed result; returns the file written."""
    storage.require_committed(layout.TRAINING, run_name, layout.FINAL_DIR)
    result = storage.read_json(layout.TRAINING, run_name, layout.FINAL_DIR, "result.json")
    out = out or baseline_path(run_name)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(format_baseline(baseline_from_result(result, tolerance)))
    return out
