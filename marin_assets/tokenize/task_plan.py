"""Which documents go into which shard, and which shards into which Spark task.

Shards are fixed by the input order alone (`shard_plan`), so their bytes never depend on the
cluster. Tasks are not: a task encodes and writes several shards, because a Spark task costs tens of
milliseconds of scheduling and Python-worker set-up whatever it does, which is a large share of a
small shard's work. Tasks are balanced by an estimate of each shard's work (its raw bytes, from the
small raw_length column) and go out heaviest first, so that the job does not end on one busy core.
"""

from __future__ import annotations

import heapq

import fsspec
import numpy as np
import pyarrow.parquet as pq

Segments = list[tuple[int, int, int]]  # (file index, first row, end row)

TASKS_PER_CORE = 4  # enough tasks for Spark's own scheduling to even out errors of the estimate
MAX_TASK_BYTES = 256 << 20  # more tasks than that on a big source: a retried task redoes at most this much


def shard_plan(file_rows: list[int], documents_per_shard: int) -> list[Segments]:
    """Per shard, its (file index, first row, end row) segments: shard i holds documents
    [i * documents_per_shard, (i + 1) * documents_per_shard) of the files read in order."""
    plan, current, room = [], [], documents_per_shard
    for index, rows in enumerate(file_rows):
        start = 0
        while start < rows:
            take = min(room, rows - start)
            current.append((index, start, start + take))
            start, room = start + take, room - take
            if room == 0:
                plan.append(current)
                current, room = [], documents_per_shard
    if current:
        plan.append(current)
    return plan


def shard_weights(files: list[str], plan: list[Segments]) -> list[int]:
    """Raw bytes per shard, from the raw_length column (a row where it is missing or null counts 1):
    an estimate of each shard's encoding time, read without reading any text."""
    cumulative = []
    for uri in files:
        with fsspec.open(uri, "rb") as f:
            pf = pq.ParquetFile(f)
            if "raw_length" in pf.schema_arrow.names:
                sizes = np.asarray(pf.read(columns=["raw_length"]).column(0).fill_null(1), dtype=np.int64)
            else:
                sizes = np.ones(pf.metadata.num_rows, np.int64)
        cumulative.append(np.concatenate([[0], np.cumsum(sizes)]))
    return [sum(int(cumulative[f][b] - cumulative[f][a]) for f, a, b in segments) for segments in plan]


def task_count(weights: list[int], cores: int) -> int:
    """TASKS_PER_CORE tasks per core, more where tasks would exceed MAX_TASK_BYTES, never more than shards."""
    return min(len(weights), max(cores * TASKS_PER_CORE, -(-sum(weights) // MAX_TASK_BYTES), 1))


def task_groups(weights: list[int], tasks: int) -> list[list[int]]:
    """Shard indices per task: the heaviest shard left goes to the lightest task so far (LPT); the
    tasks are returned heaviest first, the order Spark will start them in."""
    loads = [(0, t) for t in range(tasks)]
    groups: list[list[int]] = [[] for _ in range(tasks)]
    for shard in sorted(range(len(weights)), key=lambda i: (-weights[i], i)):
        load, task = heapq.heappop(loads)
        groups[task].append(shard)
        heapq.heappush(loads, (load + weights[shard], task))
    total = {t: load for load, t in loads}
    return [groups[t] for t in sorted(range(tasks), key=lambda t: (-total[t], t)) if groups[t]]
