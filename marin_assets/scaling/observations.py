"""Turn the suite's run results into the table the fits read, excluding bad runs with a reason.

Every input run ends up either in `table` or in `excluded` (counts conserve), so a failed, NaN,
diverged or duplicated run can never slip silently into, or out of, a fit.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import pandas as pd

from marin_assets.scaling.fit_metric import DEFAULT_METRIC, UnknownMetricError, downstream_selector, metric_key

# weight: how many identical rows of an external table the row stands for (duplicates: weight), else 1
COLUMNS = ["run", "budget", "size", "N", "D", "C", "U", "loss", "weight"]
SUCCEEDED = "succeeded"


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
    """The fitted metric of one run: final_eval_loss, or a name under result["metrics"] (e.g. bpb, bpb:wiki;
    an external table's metric column by its own name)."""
    if metric == DEFAULT_METRIC:
        return result.get(metric)
    metrics = result.get("metrics") or {}
    if metric in metrics:
        return metrics[metric]
    try:
        return metrics.get(metric_key(metric))
    except UnknownMetricError:
        return None


def _require_reported(results: list[dict], metric: str) -> None:
    """A metric no succeeded run reports is a typo or an unknown domain: say which ones the runs have."""
    succeeded = [r for r in results if r.get("status") == SUCCEEDED]
    if metric == DEFAULT_METRIC or not succeeded or any(metric_value(r, metric) is not None for r in succeeded):
        return
    selector = downstream_selector(metric)
    if selector is not None:  # the reader sets it from the run's evaluation on the task set, when there is one
        raise UnknownMetricError(f"fit.metric {metric!r}: none of the {len(succeeded)} succeeded runs has a committed "
                                 f"downstream evaluation on task set {selector[0]!r} (materialize the suite's "
                                 "downstream evaluation on it first, or check the task set's name)")
    known = sorted({k for r in succeeded for k in (r.get("metrics") or {})})
    named = ", ".join(k.replace("/", ":") for k in known) or "none"
    raise UnknownMetricError(f"fit.metric {metric!r}: none of the {len(succeeded)} succeeded runs reports it; "
                             f"they report {DEFAULT_METRIC}, {named}")


def collect_observations(results: list[dict], *, max_loss: float | None = None,
                         metric: str = DEFAULT_METRIC) -> Observations:
    """results: dicts with run, budget, size, N, D, C, final_eval_loss, status (the runs' result.json),
    optionally unique_tokens (U, for the data-constrained law) and metrics (per-domain evaluation).

    max_loss: losses above it count as diverged; default per run ln(vocab_size) + 1 (clearly worse
    than a uniform guess over the vocabulary) when the result records its vocab_size. `metric`
    picks what the `loss` column holds; a run without it is excluded with that reason, and a metric
    that no succeeded run has is an UnknownMetricError (naming the metrics the runs do have).
    """
    _require_reported(results, metric)
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
            rows.append({**{k: result.get(k) for k in COLUMNS if k not in ("loss", "U", "weight")},
                         "U": float(unique) if _positive(unique) else math.nan, "loss": float(loss),
                         "weight": float(result.get("weight", 1))})
    table = pd.DataFrame(rows, columns=COLUMNS).astype({"U": float, "weight": float})
    repeated = table[table.duplicated(["N", "D"], keep=False)]
    if len(repeated):
        runs = ", ".join(sorted(repeated["run"]))
        warnings.append(f"runs with identical (N, D) are fitted as replicates: {runs}")
    return Observations(table.sort_values(["budget", "N"]).reset_index(drop=True), excluded, warnings)
