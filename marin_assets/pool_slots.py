"""`marin materialize-all` waits for a free pool slot before it starts a run, sleeping, and stops on SIGTERM.

A run started while its pool (e.g. `training`, one slot locally) is full waits inside Dagster's
in-process executor, whose claim loop in Dagster 1.13 never sleeps (a core at 100%) and cannot see
SIGTERM (Dagster has turned it into a flag that loop does not read). So the command waits here
first, outside any run: between checks it sleeps, and SIGTERM raises `Stopped` (core.waiting) with
no run created and no claim left behind. Runs launched from the UI, schedules and sensors wait in the
QueuedRunCoordinator's queue instead, which does not dequeue a run while its pool is full.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import dagster as dg

from marin_assets.core.waiting import stop_on_sigterm

CHECK_INTERVAL_S = 1.0


def pools_of(defs: dg.Definitions, keys: Iterable[dg.AssetKey]) -> set[str]:
    """The concurrency pools the ops computing these assets declare."""
    pools = set()
    for key in keys:
        node_def = defs.get_assets_def(key).node_def
        pools |= set(getattr(node_def, "pools", None) or ())
    return pools


def pool_limit(instance: dg.DagsterInstance, pool: str) -> int | None:
    """The pool's slot count: set for it (`dagster instance concurrency set`), else the instance's default."""
    storage = instance.event_log_storage
    if pool in storage.get_concurrency_keys():
        return storage.get_concurrency_info(pool).slot_count
    return instance.get_concurrency_config().pool_config.default_pool_limit


def pool_is_full(instance: dg.DagsterInstance, pool: str) -> bool:
    limit = pool_limit(instance, pool)
    if limit is None:  # no limit on this instance
        return False
    return instance.event_log_storage.get_concurrency_info(pool).active_slot_count >= limit


def wait_for_pool_slots(instance: dg.DagsterInstance, pools: set[str], say: Callable[[str], None],
                        sleep: Callable[[float], None] = time.sleep) -> None:
    """Block (sleeping) until each pool has a free slot. Says once what it waits for."""
    for pool in sorted(pools):
        if not pool_is_full(instance, pool):
            continue
        holders = sorted(instance.event_log_storage.get_concurrency_info(pool).active_run_ids)
        say(f"[marin] waiting for a slot of pool '{pool}' ({pool_limit(instance, pool)} slot(s), held by run(s) "
            f"{', '.join(holders) or 'none yet'}); Ctrl-C or SIGTERM stops")
        with stop_on_sigterm():  # again: a Dagster run executed earlier in this process replaced the handler
            while pool_is_full(instance, pool):
                sleep(CHECK_INTERVAL_S)
