"""Materialize every stale or missing asset partition of the graph, upstream first.

This is what the README's main command runs. It observes the observable sources, then walks the
asset graph upstream first and launches one run per (asset, partition) that is missing or stale
(stale_status: Dagster's rule, on public APIs), exactly what `dagster asset materialize --select
... --partition ...` would launch. Fresh partitions (same code version, same input data versions)
are skipped, so a second call is a no-op. A failure skips its downstream, the other branches go on,
and every failure is listed at the end (non-zero exit).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import dagster as dg

from marin_assets.console import QuietConsole
from marin_assets.core.waiting import EXIT_STOPPED, Stopped, raise_if_signalled, stop_on_sigterm
from marin_assets.pool_slots import pools_of, wait_for_pool_slots
from marin_assets.stage_jobs import STAGE_JOB_TAG, job_name_for, run_tags, stage_jobs
from marin_assets.stale_status import StaleStatus, asset_nodes, toposorted
from marin_assets.train.hardware import LOCAL_PARTITIONS_METADATA

OBSERVE_JOB = "marin_observe_sources"


@dataclass(frozen=True)
class PlannedRun:
    asset_keys: tuple[dg.AssetKey, ...]
    partition_key: str | None
    causes: tuple[str, ...] = field(default=(), compare=False)  # why it runs (StaleStatus.causes)

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
        for pk in partition_keys:
            causes = status.causes(key, pk)
            if causes:
                runs.append(PlannedRun((key,), pk, tuple(causes)))
    return runs


def execute(defs: dg.Definitions, instance: dg.DagsterInstance, run: PlannedRun) -> dg.ExecuteInProcessResult:
    """Run through the asset's stage job, tagged with what it builds (the runs list names both)."""
    key = run.asset_keys[0]
    name = job_name_for(defs.assets or [], key)
    if name not in {job.name for job in defs.jobs or []}:  # a Definitions built without the stage jobs
        defs = dg.Definitions(assets=defs.assets, asset_checks=defs.asset_checks, resources=defs.resources,
                              jobs=stage_jobs(defs.assets or []))
    return defs.resolve_job_def(name).execute_in_process(
        instance=instance,
        partition_key=run.partition_key,
        asset_selection=list(run.asset_keys),
        tags={**run_tags(key, run.partition_key), STAGE_JOB_TAG: name},  # as the UI's runs get them (run_names)
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


def not_run_here(defs: dg.Definitions) -> list[tuple[str, list[str]]]:
    """(asset, partitions) that materialize-all leaves out on this machine (e.g. TPU training runs)."""
    out = []
    for key, node in asset_nodes(defs).items():
        local = (node.spec.metadata or {}).get(LOCAL_PARTITIONS_METADATA)
        if local is not None and node.spec.partitions_def is not None:
            others = [pk for pk in node.spec.partitions_def.get_partition_keys() if pk not in set(local)]
            if others:
                out.append((key.to_user_string(), others))
    return sorted(out)


def materialize_all(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    exclude: set[str] = frozenset(),
    only: set[str] | None = None,
    console: QuietConsole | None = None,
) -> bool:
    """Plan, then run level by level (re-planning, since new data versions make more partitions stale)."""
    console = console or QuietConsole(None, verbose=True)
    with console.capture():
        observe_sources(defs, instance)
    for asset, partitions in not_run_here(defs):
        console.say(f"[marin] not run here: {asset} [{', '.join(partitions)}] (needs its production launcher, "
                    "e.g. a TPU slice; see the asset's description)")
    done: set[PlannedRun] = set()
    failed: list[tuple[PlannedRun, str]] = []
    skipped: set[str] = set(exclude)
    first = True
    while True:
        runs = plan(defs, instance, skipped, only)
        if first:
            console.grow(len(runs))
            first = False
        elif len(done) + len(runs) > console.total:  # upstream outputs changed: more became due
            console.grow(len(done) + len(runs) - console.total)
        if not runs:
            break
        run = runs[0]
        if run in done:
            # Materialized, yet still not fresh: something is nondeterministic or volatile. Stop, loudly.
            console.say(f"[marin] {run.describe()} is still stale after materializing it; refusing to loop")
            return False
        done.add(run)
        wait_for_pool_slots(instance, pools_of(defs, run.asset_keys), console.say)
        started = time.monotonic()
        with console.capture():
            result = execute(defs, instance, run)
        key = run.asset_keys[0].to_user_string()
        note = "" if result.success else f"run {result.run_id}"
        console.finished(key, run.partition_key, result.success, time.monotonic() - started, note)
        raise_if_signalled()  # a SIGTERM that ended this run ends the command, not just the run
        if not result.success:
            # Keep going with the branches that do not depend on the failure; report it at the end.
            failed.append((run, result.run_id))
            blocked = _with_downstream(defs, run.asset_keys) - set(run.asset_keys)
            skipped |= {k.to_user_string() for k in _with_downstream(defs, run.asset_keys)}
            if blocked:
                console.say(f"[marin]        skipping its downstream: {', '.join(sorted(k.to_user_string() for k in blocked))}")
    console.say(f"[marin] {len(done)} run(s) executed, {len(failed)} failed, in {console.elapsed():.1f}s")
    for run, run_id in failed:
        console.say(f"[marin] failed: {run.describe()} (run {run_id}; `marin failures list`, or the log file)")
    if not failed:
        console.say("[marin] graph up to date")
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
    parser.add_argument("--verbose", action="store_true",
                        help="print every Dagster event and the trainers' output here instead of in the log file")
    parser.set_defaults(handler=_run)


def log_path(instance: dg.DagsterInstance) -> str:
    """.marin/logs/materialize-all-<UTC time>.log beside the instance's home (DAGSTER_HOME)."""
    logs = os.environ.get("MARIN_LOG_DIR") or os.path.join(os.path.dirname(instance.root_directory), "logs")
    return os.path.join(logs, f"materialize-all-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.log")


def _run(args) -> int:
    # SIGTERM stops the command: while planning or waiting for a pool slot (Stopped), or inside a run
    # (Dagster's own interrupt, which marks that run failed).
    try:
        with stop_on_sigterm():
            return _materialize_command(args)
    except (Stopped, dg.DagsterExecutionInterruptedError) as exc:
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
                print(f"[marin]     because it {'; '.join(run.causes)}" if run.causes[0] != "missing" else
                      "[marin]     because it is missing")
            return 0
        path = log_path(instance)
        with QuietConsole(path, verbose=args.verbose) as console:
            if not args.verbose:
                console.say(f"[marin] full Dagster, Spark and trainer logs: {path} (--verbose prints them here)")
            ok = materialize_all(defs, instance, set(args.exclude), only, console)
            root = defs.resources["storage"].root_uri
            console.say(f"[marin] outputs under {root}; Dagster instance in {instance.root_directory}")
            console.say("[marin] open the UI: source scripts/env.sh && dagster dev -m marin_assets.definitions "
                        "-h 127.0.0.1 -p 3000")
            console.say("[marin] the fits re-materialize by themselves when a scaling run lands while the Dagster "
                        "daemon runs (`dagster dev` starts it; default_automation_condition_sensor is on)")
        return 0 if ok else 1
