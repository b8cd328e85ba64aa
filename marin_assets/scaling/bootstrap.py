"""Bootstrap confidence intervals for the parametric law: resample runs with replacement, refit.

A resample is a vector of per-run multiplicities (weights), so every refit sees the same arrays and
warm-starts from the full-data fit: its law and BFGS's curvature estimate from the grid search.
Refits use the Huber objective by default, which is what Besiroglu et al. do for their published
intervals (their point estimate is the likelihood fit): warm-started, it converges in ~10 BFGS
steps where the kinked likelihood needs ~150, and it gives their intervals on the Chinchilla
points (a test checks the warm start against a full grid search on resamples).

With workers > 1, refits are spread over the calling process plus spawned workers: the
caller works on chunks from the back of the queue while spawned workers (which take seconds to
import scipy) take chunks from the front, so no core idles during start-up and a slow core does less.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from marin_assets.scaling.laws import Law, get_form
from marin_assets.scaling.parametric import ParametricFit, refit_resamples

CHUNK = 25  # refits per task (~0.1 s): small enough to balance the processes


@dataclass(frozen=True)
class BootstrapResult:
    samples: pd.DataFrame  # one row per resample: the form's parameters, converged
    n_requested: int
    n_failed: int
    level: float
    seed: int
    form: str = "chinchilla"
    context: dict | None = None  # the law's fixed quantities (e.g. the unique-token pool)

    def intervals(self) -> dict[str, tuple[float, float]]:
        ok = self.samples[self.samples["converged"]]
        return {name: percentile_interval(ok[name].to_numpy(), self.level) for name in get_form(self.form).param_names}

    def laws(self) -> list[Law]:
        return laws_from_samples(self.samples, self.form, self.context)


def laws_from_samples(samples: pd.DataFrame, form: str = "chinchilla", context: dict | None = None) -> list[Law]:
    form_impl = get_form(form)
    ok = samples[samples["converged"]]
    return [form_impl.from_params({k: float(row[k]) for k in form_impl.param_names}, context) for _, row in ok.iterrows()]


def percentile_interval(values, level: float = 0.95) -> tuple[float, float]:
    values = np.asarray(values, float)
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return (float("nan"), float("nan"))
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(values, [tail, 100.0 - tail])
    return (float(lo), float(hi))


def resample_weights(n_points: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, n_points) multiplicities of a with-replacement resample of the runs."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_points, size=(n_boot, n_points))
    return np.stack([np.bincount(row, minlength=n_points) for row in draws]).astype(float)


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def bootstrap_parametric(
    N, D, L, point: ParametricFit, *, n_boot: int = 1000, seed: int = 0, level: float = 0.95,
    workers: int | None = None, refit_method: str = "huber", covariates: dict | None = None, weights=None,
) -> BootstrapResult:
    """Refit on `n_boot` resamples of the runs, warm-started at `point` (same seed → same intervals).

    `workers` counts processes including this one. None = this process alone: a warm-started refit
    takes ~3 ms, and on the shared 2-core machine a second process made 1000 and 5000 refits slower
    (a spawned worker spends 2-8 s importing scipy). Pass workers=available_cores() where cores idle.
    """
    N, D, L = (np.asarray(v, float) for v in (N, D, L))
    # `weights`: rows fitted once for several identical ones; a resample draws rows, each keeping its count
    weights = resample_weights(len(L), n_boot, seed) * (1.0 if weights is None else np.asarray(weights, float))
    if workers is None:
        workers = 1
    chunks = [weights[i:i + CHUNK] for i in range(0, n_boot, CHUNK)]
    workers = max(1, min(workers, len(chunks)))
    names = get_form(point.form).param_names
    task = (N, D, L, point)
    if workers == 1:
        results = [refit_resamples(*task, rows, refit_method, covariates) for rows in chunks]
    else:
        results = _map_shared(chunks, task, (refit_method, covariates), n_spawned=workers - 1)
    table = np.concatenate(results) if results else np.empty((0, len(names) + 1))
    samples = pd.DataFrame(table[:, :-1], columns=list(names))
    samples["converged"] = table[:, -1] == 1.0
    return BootstrapResult(samples, n_boot, int((~samples["converged"]).sum()), level, seed, point.form,
                           dict(point.context))


def _map_shared(chunks, task, options, n_spawned) -> list[np.ndarray]:
    """Results per chunk, in order; this process takes chunks from the back, the pool from the front.

    When the queue is empty, this process also computes the chunks still out with workers (a worker
    may still be importing scipy) instead of waiting; whichever copy finishes first is kept, and
    both are the same deterministic refits.
    """
    queue, lock, results = deque(enumerate(chunks)), threading.Lock(), [None] * len(chunks)
    out_with_workers: set[int] = set()

    def take(from_front: bool):
        with lock:
            if not queue:
                return None
            if not from_front:
                return queue.pop()
            item = queue.popleft()
            out_with_workers.add(item[0])
            return item

    def keep(index, rows):
        with lock:
            if results[index] is None:
                results[index] = rows

    # spawn, not fork: the caller (Dagster, JAX) may be multi-threaded.
    pool = ProcessPoolExecutor(max_workers=n_spawned, mp_context=multiprocessing.get_context("spawn"))

    def feed():  # one feeder thread per worker process; it only waits, so the GIL stays free
        try:
            while (item := take(from_front=True)) is not None:
                keep(item[0], pool.submit(refit_resamples, *task, item[1], *options).result())
        except Exception:  # noqa: BLE001 - a broken worker: this process redoes its chunks below
            return

    try:
        for _ in range(n_spawned):
            threading.Thread(target=feed, daemon=True).start()
        while (item := take(from_front=False)) is not None:
            keep(item[0], refit_resamples(*task, item[1], *options))
        with lock:
            unfinished = [index for index in sorted(out_with_workers) if results[index] is None]
        for index in unfinished:
            if results[index] is None:
                keep(index, refit_resamples(*task, chunks[index], *options))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)  # a worker still starting up exits on its own
    return results


def prediction_intervals(laws: list[Law], budgets, level: float = 0.95,
                         flops_per_param_token: float = 6.0) -> pd.DataFrame:
    """Per target budget: intervals of the compute-optimal N*, D* and loss across bootstrap laws."""
    rows = []
    for budget in np.asarray(budgets, float):
        n_opt, d_opt, loss = [], [], []
        for law in laws:
            n, d = law.compute_optimal(budget, flops_per_param_token)
            n_opt.append(n), d_opt.append(d), loss.append(law.loss(n, d))
        row = {"C": float(budget)}
        for name, values in (("N_opt", n_opt), ("D_opt", d_opt), ("loss", loss)):
            row[f"{name}_lo"], row[f"{name}_hi"] = percentile_interval(values, level)
        rows.append(row)
    return pd.DataFrame(rows)
