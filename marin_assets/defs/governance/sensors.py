"""Run-failure sensor: every failed run becomes a record in the failure catalog (failure_catalog.py)."""

from __future__ import annotations

import datetime as dt
import logging

import dagster as dg

from marin_assets.core.environment import environment_snapshot
from marin_assets.governance.failure_catalog import LOG_TAIL_LINES, failure_record, step_failure, write_failure
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.core.checkpoint_folders import CHECKPOINTS_TAG, checkpoint_uri, latest_checkpoint_step

PARTITION_TAG = "dagster/partition"


def _error_chain(error) -> list[tuple[str, str, list[str]]]:
    """(class, message, stack) of a SerializableErrorInfo and its causes, outermost first."""
    chain = []
    while error is not None:
        chain.append((error.cls_name or "Error", error.message, list(error.stack)))
        error = error.cause
    return chain


def _planned_assets_by_step(instance: dg.DagsterInstance, run_id: str) -> dict[str, set[str]]:
    """step key -> asset keys it was to materialize, from the run's own planning events."""
    records = instance.get_records_for_run(
        run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED
    ).records
    by_step: dict[str, set[str]] = {}
    for record in records:
        event = record.event_log_entry.dagster_event
        if event is not None and event.asset_key is not None:
            by_step.setdefault(event.step_key or "", set()).add(event.asset_key.to_user_string())
    return by_step


def _log_tail(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    records = instance.get_records_for_run(run_id, limit=LOG_TAIL_LINES, ascending=False).records
    lines = []
    for record in reversed(records):
        entry = record.event_log_entry
        level = logging.getLevelName(entry.level) if isinstance(entry.level, int) else str(entry.level)
        stamp = dt.datetime.fromtimestamp(entry.timestamp, dt.UTC).strftime("%H:%M:%S")
        lines.append(f"{stamp} {level} {entry.step_key or '-'}: {entry.message}")
    return lines


def _code_versions(context: dg.RunFailureSensorContext, asset_keys: set[str]) -> dict[str, str]:
    repo = context.repository_def
    if repo is None:
        return {}
    out = {}
    for key, assets_def in repo.assets_defs_by_key.items():
        name = key.to_user_string()
        if name in asset_keys and assets_def.code_versions_by_key.get(key):
            out[name] = assets_def.code_versions_by_key[key]
    return out


def _failed_at(instance: dg.DagsterInstance, run_id: str) -> dt.datetime:
    record = instance.get_run_record_by_id(run_id)
    if record is not None and record.end_time:
        return dt.datetime.fromtimestamp(record.end_time, dt.UTC)
    return dt.datetime.now(dt.UTC)


def record_from_failure(context: dg.RunFailureSensorContext) -> dict:
    """Everything a later reader needs to understand the failure without the Dagster instance."""
    run = context.dagster_run
    assets_by_step = _planned_assets_by_step(context.instance, run.run_id)
    all_assets = set().union(*assets_by_step.values()) if assets_by_step else set()
    steps = [
        step_failure(
            event.step_key or "",
            assets_by_step.get(event.step_key or "", set()),
            _error_chain(event.step_failure_data.error if event.step_failure_data else None),
        )
        for event in context.get_step_failure_events()
    ]
    return failure_record(
        run_id=run.run_id,
        job_name=run.job_name,
        failed_at=_failed_at(context.instance, run.run_id),
        partition=run.tags.get(PARTITION_TAG),
        assets=all_assets,
        steps=steps,
        run_error=context.failure_event.message or "",
        log_tail=_log_tail(context.instance, run.run_id),
        tags=dict(run.tags),
        run_config=dict(run.run_config or {}),
        code_versions=_code_versions(context, all_assets),
        environment=environment_snapshot(),
        last_checkpoint=last_complete_checkpoint(run.tags.get(CHECKPOINTS_TAG)),
    )


def last_complete_checkpoint(checkpoints_dir: str | None) -> str | None:
    """The newest complete checkpoint (orbax's marker written) under a run's checkpoint folder, if any."""
    if not checkpoints_dir:
        return None
    step = latest_checkpoint_step(checkpoints_dir)
    return checkpoint_uri(checkpoints_dir, step) if step is not None else None


@dg.run_failure_sensor(
    name="failure_catalog_sensor",
    description="Records every failed run (assets, partition, step errors, log tail, provenance) "
    "under governance/failure_catalog/<run_id>.json",
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
)
def failure_catalog_sensor(context: dg.RunFailureSensorContext, storage: StorageResource) -> None:
    path = write_failure(storage.storage, record_from_failure(context))
    context.log.info(f"recorded failed run {context.dagster_run.run_id} at {path}")
