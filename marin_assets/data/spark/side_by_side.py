"""Independent Spark jobs of one run, submitted side by side from driver threads.

After the cleaning job's rows are computed and cached, what is left (three writes, the examples,
file errors, curation counts, the independent record count) is a dozen small jobs whose time is
mostly scheduling latency, not CPU: one after the other they cost more than the cleaning of a
small source. Spark schedules jobs from several driver threads at once, so they overlap. Results
do not depend on the order jobs finish in (each is deterministic on its own).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

MAX_THREADS = 8  # jobs in flight at once; more only queue in Spark's scheduler


def run_side_by_side(jobs: dict[str, dict[str, Callable[[], Any]]],
                     max_threads: int = MAX_THREADS) -> dict[str, dict[str, Any]]:  # fmt: skip
    """{group: {name: job}} -> {group: {name: its result}}; the first failure is raised, and jobs not started
    by then are cancelled (a failed run retries as a whole)."""
    pool = ThreadPoolExecutor(max_workers=max_threads, thread_name_prefix="spark-job")
    try:
        futures = {group: {name: pool.submit(job) for name, job in named.items()} for group, named in jobs.items()}
        return {group: {name: f.result() for name, f in named.items()} for group, named in futures.items()}
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


class Once:
    """A job's input that other jobs share: computed by the first job that asks, the others wait for it.

    Jobs that need it start side by side with those that do not, instead of after it. A failure is
    raised to the job that asked; a later ask computes again.
    """

    def __init__(self, compute: Callable[[], Any]):
        self.compute, self.lock, self.done, self.value = compute, threading.Lock(), False, None

    def __call__(self) -> Any:
        with self.lock:
            if not self.done:
                self.value, self.done = self.compute(), True
        return self.value
