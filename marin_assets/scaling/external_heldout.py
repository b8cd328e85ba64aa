"""Held-out rows of an external table, predicted by the suite's fitted law and scored against the table (pure).

An external suite's `heldout:` expression marks rows the fits leave out (status "held out by the
recipe"). Like the trained suite's held-out run, each is predicted from Approach 3's law at its
(N, D), with the percentile interval of the bootstrap's laws, and its relative error
(predicted - observed) / observed is what the suite reports; the rows are in the table already, so
there is nothing to preregister.
"""

from __future__ import annotations

import math

import numpy as np

from marin_assets.scaling.bootstrap import percentile_interval
from marin_assets.scaling.external import HELD_OUT
from marin_assets.scaling.observations import metric_value


def heldout_rows(results: list[dict]) -> list[dict]:
    return [r for r in results if str(r.get("status", "")).startswith(HELD_OUT)]


def score_rows(law, boot_laws: list, rows: list[dict], metric: str, level: float) -> list[dict]:
    """Per held-out row: predicted and observed metric, the bootstrap interval, the relative error, inside or not."""
    scored = []
    for r in rows:
        observed = metric_value(r, metric)
        predicted = float(law.loss(r["N"], r["D"]))
        interval = percentile_interval([m.loss(r["N"], r["D"]) for m in boot_laws], level) if boot_laws else None
        usable = observed is not None and math.isfinite(observed) and observed > 0
        error = (predicted - observed) / observed if usable else None
        scored.append({"run": r["run"], "N": r["N"], "D": r["D"], "C": r["C"], "observed": observed,
                       "predicted": predicted, "interval": list(interval) if interval else None,
                       "relative_error": error,
                       "within_interval": bool(interval and usable and interval[0] <= observed <= interval[1])})
    return scored


def summary(scored: list[dict], target: float) -> dict:
    """The suite's held-out error: the largest and mean |relative error|, and how many rows meet the target."""
    errors = np.array([abs(s["relative_error"]) for s in scored if s["relative_error"] is not None])
    if not len(errors):
        return {"rows": len(scored), "scored": 0, "max_abs_relative_error": None, "mean_abs_relative_error": None,
                "within_target": 0, "target": target}
    return {"rows": len(scored), "scored": int(len(errors)), "max_abs_relative_error": float(errors.max()),
            "mean_abs_relative_error": float(errors.mean()), "within_target": int((errors <= target).sum()),
            "within_interval": int(sum(s["within_interval"] for s in scored)), "target": target}
