"""A trained suite's observations: its runs' committed result.json files, as the fits read them, with
the downstream metric of their evaluation (evaluation/<suite>/<run>/<task set>) when fit.metric names one."""

from __future__ import annotations

from marin_assets.core import layout
from marin_assets.core.storage import Storage, StorageError
from marin_assets.scaling.fit_metric import downstream_selector, downstream_value, metric_key
from marin_assets.scaling.observations import Observations, collect_observations
from marin_assets.scaling.run_results import RESULT_FILE, data_repetition, run_parts
from marin_assets.scaling.suite import ScalingRecipe, SuiteRun


def read_results(storage: Storage, suite: str, runs: list[SuiteRun]) -> tuple[list[dict], list[str]]:
    """Committed results of the suite's runs, and the keys with none yet (not trained or failed)."""
    results, missing = [], []
    for run in runs:
        parts = run_parts(suite, run.key)
        if storage.is_committed(*parts):
            results.append(storage.read_json(*parts, RESULT_FILE))
        else:
            missing.append(run.key)
    return results, missing


def fill_unique_tokens(storage: Storage, mixture: str, results: list[dict]) -> list[str]:
    """Runs whose result.json predates the unique-token record get it from mixture.json (same formula)."""
    from marin_assets.tokenize.mixture_info import load_mixture_info

    missing = [r for r in results if r.get("unique_tokens") is None and isinstance(r.get("D"), (int, float))]
    if not missing:
        return []
    try:
        info = load_mixture_info(storage, mixture)
    except StorageError as exc:
        return [f"{len(missing)} runs have no unique-token count and mixture {mixture!r} is unreadable: {exc}"]
    for result in missing:
        repetition = data_repetition(info.sources, result["D"])
        result.update({k: repetition[k] for k in ("unique_tokens", "epochs")})
    return [f"{len(missing)} runs' unique tokens computed from mixture {mixture!r} (their result.json predates it)"]


def evaluation_parts(suite: str, run_key: str, task_set: str) -> tuple[str, ...]:
    """Where the evaluation stage commits a suite run's evaluation (the held-out run's key is "heldout")."""
    return (layout.EVALUATION, suite, run_key, task_set)


def attach_downstream(storage: Storage, suite: str, results: list[dict], metric: str,
                      run_key: str | None = None) -> None:
    """Put a `downstream:<task set>:<measure>` metric into each result's `metrics`, read from the run's committed
    evaluation; a run not evaluated yet gets none (the fits then exclude it, saying so). Other metrics: no-op."""
    selector = downstream_selector(metric)
    if selector is None:
        return
    task_set, measure = selector
    for result in results:
        parts = evaluation_parts(suite, run_key or str(result.get("run")), task_set)
        if storage.is_committed(*parts):
            overall = storage.read_json(*parts, RESULT_FILE)["overall"]
            result.setdefault("metrics", {})[metric_key(metric)] = downstream_value(overall, measure)


def observations_for(storage: Storage, recipe: ScalingRecipe, runs: list[SuiteRun]) -> tuple[Observations, list[str]]:
    results, missing = read_results(storage, recipe.name, runs)
    notes = fill_unique_tokens(storage, recipe.mixture, results)
    attach_downstream(storage, recipe.name, results, recipe.fit.metric)
    obs = collect_observations(results, max_loss=recipe.fit.max_loss, metric=recipe.fit.metric)
    obs.warnings.extend(notes)
    if missing:
        obs.warnings.append(f"{len(missing)} planned runs have no result yet: {', '.join(missing)}")
    return obs, missing
