"""Materialize every stale or missing asset partition of the graph, upstream first.

This is what the README's main command runs. It observes the observable sources, then walks the
asset graph upstream first and launches one run per (asset, partition) that is missing or stale
(stale_status: Dagster's rule, on public APIs), exactly what `dagster asset materialize --select
... --partition ...` would launch. Fresh partitions (same code version, same input data versions)
are skipped, so a second call is a no-op. A failure skips its downstream, the other branches go on,
and every failure is listed at the end (non-zero exit).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import dagster as dg

from marin_assets.stale_status import StaleStatus, asset_nodes, toposorted
from marin_assets.train.resources import LOCAL_PARTITIONS_METADATA

OBSERVE_JOB = "marin_observe_sources"


@dataclass(frozen=True)
class PlannedRun:
    asset_keys: tuple[dg.AssetKey, ...]
    partition_key: str | None

    def describe(self) -> str:
        keys = ",".join(k.to_user_string() for k in self.asset_keys)
        return f"{keys}" + (f" [{self.partition_key}]" if self.partition_key else "")


def plan(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    exclude: set[str] = frozenset(),
    only: set[str] | None = None,
) -> list[PlannedRun]:
    """Runs needed now, upstream first: one per (asset, partition) that is missing or stale.

    One asset per run: a failure then blocks only what really depends on it.
    """
    nodes = asset_nodes(defs)
    status = StaleStatus(defs, instance, nodes)
    runs = []
    for key in toposorted(nodes):
        node, name = nodes[key], key.to_user_string()
        if not node.materializable or name in exclude or (only is not None and name not in only):
            continue
        partitions_def = node.spec.partitions_def
        partition_keys = partitions_def.get_partition_keys(dynamic_partitions_store=instance) if partitions_def else [None]
        local = (node.spec.metadata or {}).get(LOCAL_PARTITIONS_METADATA)
        if local is not None:
            partition_keys = [pk for pk in partition_keys if pk in set(local)]
        runs.extend(PlannedRun((key,), pk) for pk in partition_keys if status.causes(key, pk))
    return runs


def execute(defs: dg.Definitions, instance: dg.DagsterInstance, run: PlannedRun) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [*defs.assets, *(defs.asset_checks or [])],
        selection=dg.AssetSelection.assets(*run.asset_keys),
        instance=instance,
        partition_key=run.partition_key,
        resources=defs.resources,
        raise_on_error=False,
    )


def observe_sources(defs: dg.Definitions, instance: dg.DagsterInstance) -> None:
    """Observe the observable source assets, so changed raw files or run entries show up as new data versions.

    One job per source: a job's assets must share one partitions definition.
    """
    for source in [a for a in defs.assets or [] if isinstance(a, dg.SourceAsset) and a.is_observable]:
        job = dg.define_asset_job(OBSERVE_JOB, selection=dg.AssetSelection.all(include_sources=True))
        observing = dg.Definitions(assets=[source], jobs=[job], resources=defs.resources)
        observing.get_job_def(OBSERVE_JOB).execute_in_process(instance=instance)


def materialize_all(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    exclude: set[str] = frozenset(),
    only: set[str] | None = None,
) -> bool:
    """Plan, then run level by level (re-planning, since new data versions make more partitions stale)."""
    started = time.monotonic()
    observe_sources(defs, instance)
    done: set[PlannedRun] = set()
    failed: list[PlannedRun] = []
    skipped: set[str] = set(exclude)
    while True:
        runs = plan(defs, instance, skipped, only)
        if not runs:
            break
        run = runs[0]
        if run in done:
            # Materialized, yet still not fresh: something is nondeterministic or volatile. Stop, loudly.
            print(f"[marin] {run.describe()} is still stale after materializing it; refusing to loop")
            return False
        done.add(run)
        print(f"[marin] materializing {run.describe()}", flush=True)
        result = execute(defs, instance, run)
        if not result.success:
            # Keep going with the branches that do not depend on the failure; report it at the end.
            failed.append(run)
            blocked = _with_downstream(defs, run.asset_keys)
            skipped |= {k.to_user_string() for k in blocked}
            print(f"[marin] FAILED: {run.describe()} (run {result.run_id}); skipping its downstream "
                  f"({', '.join(sorted(k.to_user_string() for k in blocked))})", flush=True)
    elapsed = time.monotonic() - started
    print(f"[marin] {len(done)} run(s) executed, {len(failed)} failed, in {elapsed:.1f}s", flush=True)
    for run in failed:
        print(f"[marin] failed: {run.describe()} (its error is in the log above and in `marin failures list`)")
    if not failed:
        print("[marin] graph up to date", flush=True)
    return not failed


def _with_downstream(defs: dg.Definitions, keys) -> set[dg.AssetKey]:
    children: dict[dg.AssetKey, set[dg.AssetKey]] = {}
    for key, node in asset_nodes(defs).items():
        for dep in node.spec.deps:
            children.setdefault(dep.asset_key, set()).add(key)
    out, frontier = set(keys), list(keys)
    while frontier:
        for child in children.get(frontier.pop(), ()):
            if child not in out:
                out.add(child)
                frontier.append(child)
    return out


def register(commands) -> None:
    parser = commands.add_parser(
        "materialize-all", help="materialize every stale or missing asset partition, upstream first"
    )
    parser.add_argument("--exclude", action="append", default=[], help="asset key to leave out (repeatable)")
    parser.add_argument("--only", help="comma-separated asset keys: leave every other asset out")
    parser.add_argument("--plan", action="store_true", help="only print what would run now")
    parser.set_defaults(handler=_run)


def _run(args) -> int:
    from marin_assets.definitions import defs

    only = set(args.only.split(",")) if args.only else None
    with dg.DagsterInstance.get() as instance:
        if args.plan:
            observe_sources(defs, instance)
            for run in plan(defs, instance, set(args.exclude), only):
                print(f"[marin] would materialize {run.describe()}")
            return 0
        ok = materialize_all(defs, instance, set(args.exclude), only)
        root = defs.resources["storage"].root_uri
        print(f"[marin] outputs under {root}; Dagster instance in {instance.root_directory}")
        print("[marin] open the UI: source scripts/env.sh && dagster dev -m marin_assets.definitions -h 127.0.0.1 -p 3000")
        return 0 if ok else 1
