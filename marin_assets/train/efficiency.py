"""How well a run used its hardware: MFU, goodput and badput by cause, measured memory vs the estimate.

Pure. Inputs are the run's attempts (attempt_timeline), MaxText's TFLOP/s per device, the peak it
is divided by (the GPU/TPU catalog's, or on CPU the machine's measured matmul peak) and preflight's
memory estimate. Definitions:
- productive time = the steps of the final lineage that attempts recorded x the median step time;
- badput: startup/compile (start to the first step line, less restore and one step), checkpoint restore,
  checkpoint save (the loop's time beyond its steps at the median pace and its evals: saves, the
  final save, and any stall), evaluation,
  restarts (steps trained after the checkpoint a later attempt resumed from: lost progress),
  waiting (for a pool slot or the run folder's lease), other (the rest: launcher, domain eval, exit);
- goodput = productive / (every attempt's wall + waiting).
"""

from __future__ import annotations

import statistics

from marin_assets.train.attempt_timeline import Attempt

CAUSES = ("startup_compile", "checkpoint_restore", "checkpoint_save", "evaluation", "restarts", "waiting", "other")


def median_step_s(attempts: list[Attempt]) -> float | None:
    """Median of every attempt's step times except its first (which includes compilation)."""
    times = [t for a in attempts for step, t in sorted(a.step_seconds.items())[1:]]
    if not times:
        times = [t for a in attempts for t in a.step_seconds.values()]
    return statistics.median(times) if times else None


def lost_steps(attempts: list[Attempt]) -> int:
    """Steps an attempt trained past the checkpoint the next attempt resumed from (trained twice)."""
    lost = 0
    for attempt, following in zip(attempts, attempts[1:]):
        resumed = following.restored_step if following.restored_step is not None else -1
        lost += sum(1 for step in attempt.step_seconds if step > resumed)
    return lost


def goodput(attempts: list[Attempt], waiting_s: float = 0.0) -> dict:
    if not attempts:
        return {"goodput": None, "why": "no attempt of this run recorded its timeline"}
    m = median_step_s(attempts) or 0.0
    # each step of the final lineage once; an attempt that left no record (killed -9) adds nothing
    trained = sum(len(a.step_seconds) for a in attempts)
    productive = (trained - lost_steps(attempts)) * m
    bad = dict.fromkeys(CAUSES, 0.0)
    for a in attempts:
        if a.first_step_at_s is None:  # died before its first step: all of it was start-up
            bad["startup_compile"] += max(0.0, (a.maxtext_end_s or a.wall_s) - a.restore_s)
            bad["checkpoint_restore"] += a.restore_s
            continue
        bad["startup_compile"] += max(0.0, a.first_step_at_s - a.restore_s - m)
        bad["checkpoint_restore"] += a.restore_s
        bad["evaluation"] += a.eval_s
        # the training loop after the first step, beyond its steps at the median pace and its evals
        loop = (a.maxtext_end_s if a.maxtext_end_s is not None else a.wall_s) - a.first_step_at_s
        bad["checkpoint_save"] += max(0.0, loop - (len(a.step_seconds) - 1) * m - a.eval_s)
    bad["restarts"] = lost_steps(attempts) * m
    bad["waiting"] = max(0.0, waiting_s)
    total = sum(a.wall_s for a in attempts) + bad["waiting"]
    bad["other"] = max(0.0, total - productive - sum(bad.values()))
    return {
        "goodput": productive / total if total > 0 else None,
        "productive_s": round(productive, 3),
        "total_s": round(total, 3),
        "median_step_s": m,
        "attempts": len(attempts),
        "badput_s": {k: round(v, 3) for k, v in bad.items()},
        "badput_fraction": {k: (v / total if total > 0 else 0.0) for k, v in bad.items()},
    }


def mfu(tflops_per_device: float | None, num_devices: int, peak_tflops: float | None, peak_per: str) -> float | None:
    """Model FLOPs utilisation. `peak_per` 'device' (catalog) or 'machine' (CPU: devices share the cores)."""
    if not tflops_per_device or not peak_tflops:
        return None
    achieved = tflops_per_device * (num_devices if peak_per == "machine" else 1)
    return achieved / peak_tflops


def memory_check(measured_bytes: float | None, estimate_bytes: float | None, tolerance: float) -> dict:
    """Measured peak vs the estimate; `within` is False when they differ by more than `tolerance` (relative)."""
    if not measured_bytes or not estimate_bytes:
        return {"measured_bytes": measured_bytes, "estimate_bytes": estimate_bytes, "ratio": None, "within": None,
                "tolerance": tolerance}
    ratio = measured_bytes / estimate_bytes
    return {"measured_bytes": measured_bytes, "estimate_bytes": estimate_bytes, "ratio": ratio,
            "within": abs(ratio - 1) <= tolerance, "tolerance": tolerance}
