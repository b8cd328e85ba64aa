"""Materialize every stale or missing asset partition of the graph, upstream first.

This is what the README's main command runs. It walks the asset graph in topological order and
batches consecutive assets that share a partitions definition into one run per partition key, so
a run is exactly what `dagster asset materialize --select ... --partition ...` would launch. Fresh
partitions (same code version, same input data versions) are skipped, so a second call is a no-op.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import dagster as dg
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._core.definitions.observe import observe
from dagster._core.errors import DagsterExecutionInterruptedError
from dagster._core.loader import LoadingContextForTest

from marin_assets.core.waiting import EXIT_STOPPED, Stopped, raise_if_signalled, stop_on_sigterm


# Asset metadata: the partitions `materialize-all` may run on this machine (e.g. CPU training runs,
# not the TPU ones). Assets without it are planned over all their partitions.
LOCAL_PARTITIONS_METADATA = "marin/local_partitions"


@dataclass(frozen=True)
class PlannedRun:
    asset_keys: tuple[dg.AssetKey, ...]
    partition_key: str | None

    def describe(self) -> str:
        keys = ",".join(k.to_user_string() for k in self.asset_keys)
        return f"{keys}" + (f" [{self.partition_key}]" if self.partition_key else "")


def _topological_batches(asset_graph) -> list[tuple[tuple[dg.AssetKey, ...], object]]:
    """Materializable asset keys, upstream first (by level), each with its partitions definition.

    One asset per run: a failure then blocks only what really depends on it.
    """
    batches = []
    for level in asset_graph.toposorted_asset_keys_by_level:
        for key in sorted(level, key=lambda k: k.to_user_string()):
            node = asset_graph.get(key)
            if node.is_materializable:
                batches.append(((key,), node.partitions_def))
    return batches


def plan(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    exclude: set[str] = frozenset(),
    only: set[str] | None = None,
) -> list[PlannedRun]:
    """Runs needed now: every (asset batch, partition) where some asset is missing or stale."""
    asset_graph = defs.resolve_asset_graph()
    resolver = CachingStaleStatusResolver(instance, asset_graph, LoadingContextForTest(instance))
    runs = []
    for keys, partitions_def in _topological_batches(asset_graph):
        keys = tuple(
            k for k in keys if k.to_user_string() not in exclude and (only is None or k.to_user_string() in only)
        )
        if not keys:
            continue
        partition_keys = partitions_def.get_partition_keys(dynamic_partitions_store=instance) if partitions_def else [None]
        for key in keys:
            local = asset_graph.get(key).metadata.get(LOCAL_PARTITIONS_METADATA)
            if local is not None:
                partition_keys = [pk for pk in partition_keys if pk in set(local)]
        for pk in partition_keys:
            if any(
                resolver.get_status(k, pk) != StaleStatus.FRESH or _unanchored(instance, asset_graph, k, pk)
                for k in keys
            ):
                runs.append(PlannedRun(keys, pk))
    return runs


def _unanchored(instance: dg.DagsterInstance, asset_graph, key: dg.AssetKey, partition: str | None) -> bool:
    """Materialized before its observable source was ever observed (e.g. by a plain CLI run)?

    Dagster then records no pointer to the source's observation, and its stale check can never see
    the source change afterwards. Re-materializing once anchors the provenance; the output's data
    version is unchanged, so nothing downstream is recomputed.
    """
    observable = [p for p in asset_graph.get(key).parent_keys if asset_graph.get(p).is_observable]
    if not observable:
        return False
    record = instance.get_latest_data_version_record(key, False, partition)
    if record is None:
        return False
    tags = record.asset_materialization.tags or {}
    return any(tags.get(f"dagster/input_event_pointer/{p.to_user_string()}") == "NULL" for p in observable)


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
    """Observe the observable source assets, so changed raw files show up as new data versions."""
    observable = [a for a in defs.assets if isinstance(a, dg.SourceAsset) and a.is_observable]
    if observable:
        observe(observable, instance=instance, resources=defs.resources)


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
        raise_if_signalled()  # a SIGTERM that ended this run ends the command, not just the run
        if not result.success:
            # Keep going with the branches that do not depend on the failure; report it at the end.
            failed.append(run)
            blocked = _with_downstream(defs.resolve_asset_graph(), run.asset_keys)
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


def _with_downstream(asset_graph, keys) -> set[dg.AssetKey]:
    out, frontier = set(keys), list(keys)
    while frontier:
        for child in asset_graph.get(frontier.pop()).child_keys:
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
    # SIGTERM stops the command: while planning (Stopped), or inside a run waiting for a pool slot
    # (Dagster's interrupt; marin_assets.pool_wait makes that wait see it).
    try:
        with stop_on_sigterm():
            return _materialize_command(args)
    except (Stopped, DagsterExecutionInterruptedError) as exc:
        print(f"[marin] {exc or 'stopped by a signal'}; an interrupted run is marked failed and its "
              "pool slots freed", flush=True)
        return EXIT_STOPPED


def _materialize_command(args) -> int:
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
