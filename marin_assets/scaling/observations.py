"""Turn the suite's run results into the table the fits read, excluding bad runs with a reason.

Every input run ends up either in `table` or in `excluded` (counts conserve), so a failed, NaN,
diverged or duplicated run can never slip silently into, or out of, a fit.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import pandas as pd

COLUMNS = ["run", "budget", "size", "N", "D", "C", "U", "loss"]
SUCCEEDED = "succeeded"
DEFAULT_METRIC = "final_eval_loss"


@dataclass(frozen=True)
class Exclusion:
    run: str
    reason: str


@dataclass(frozen=True)
class Observations:
    table: pd.DataFrame  # COLUMNS, one row per usable run
    excluded: list[Exclusion] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def n_input(self) -> int:
        return len(self.table) + len(self.excluded)

    def exclusion_summary(self) -> str:
        return "; ".join(f"{e.run}: {e.reason}" for e in self.excluded) or "none"


def _positive(value) -> bool:
    return isinstance(value, numbers.Real) and math.isfinite(value) and value > 0


def _limit(result: dict, max_loss: float | None) -> float:
    if max_loss is not None:
        return max_loss
    vocab = result.get("vocab_size")
    return math.log(vocab) + 1.0 if _positive(vocab) else math.inf


def metric_value(result: dict, metric: str):
    """The fitted metric of one run: final_eval_loss, or a name under result["metrics"] (e.g. bpb, loss/wiki)."""
    if metric == DEFAULT_METRIC:
        return result.get(metric)
    return (result.get("metrics") or {}).get(metric)


def collect_observations(results: list[dict], *, max_loss: float | None = None,
                         metric: str = DEFAULT_METRIC) -> Observations:
    """results: dicts with run, budget, size, N, D, C, final_eval_loss, status (the runs' result.json),
    optionally unique_tokens (U, for the data-constrained law) and metrics (per-domain evaluation).

    max_loss: losses above it count as diverged; default per run ln(vocab_size) + 1 (clearly worse
    than a uniform guess over the vocabulary) when the result records its vocab_size. `metric`
    picks what the `loss` column holds; a run without it is excluded with that reason.
    """
    rows, excluded, warnings, seen = [], [], [], {}
    for result in results:
        run = str(result.get("run", "<unnamed>"))
        loss = metric_value(result, metric)
        status = result.get("status", "<missing>")
        if run in seen:
            excluded.append(Exclusion(run, f"duplicate result for run {run} (kept the first)"))
            continue
        seen[run] = True
        if status != SUCCEEDED:
            excluded.append(Exclusion(run, f"status={status}"))
        elif loss is None or not isinstance(loss, numbers.Real) or math.isnan(loss):
            excluded.append(Exclusion(run, f"{metric} is {loss!r}"))
        elif math.isinf(loss) or loss > _limit(result, max_loss):
            excluded.append(Exclusion(run, f"diverged: {metric}={loss:.4g} > {_limit(result, max_loss):.4g}"))
        elif not all(_positive(result.get(k)) for k in ("N", "D", "C", "budget")):
            bad = [k for k in ("N", "D", "C", "budget") if not _positive(result.get(k))]
            excluded.append(Exclusion(run, f"missing or non-positive {', '.join(bad)}"))
        else:
            unique = result.get("unique_tokens")
            rows.append({**{k: result.get(k) for k in COLUMNS if k not in ("loss", "U")},
                         "U": float(unique) if _positive(unique) else math.nan, "loss": float(loss)})
    table = pd.DataFrame(rows, columns=COLUMNS).astype({"U": float})
    repeated = table[table.duplicated(["N", "D"], keep=False)]
    if len(repeated):
        runs = ", ".join(sorted(repeated["run"]))
        warnings.append(f"runs with identical (N, D) are fitted as replicates: {runs}")
    return Observations(table.sort_values(["budget", "N"]).reset_index(drop=True), excluded, warnings)
