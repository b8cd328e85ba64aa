"""`marin gc` as a Dagster job with a daily schedule, off by default (turn it on in the UI)."""

import dagster as dg

from marin_assets.governance.leftovers import DEFAULT_RETENTION_HOURS, find_leftovers, remove_leftovers
from marin_assets.resources.storage_resource import StorageResource


class GcConfig(dg.Config):
    retention_hours: float = DEFAULT_RETENTION_HOURS


@dg.op(description="Remove *.staging-* / *.superseded-* folders older than the retention; log each one")
def remove_storage_leftovers(context: dg.OpExecutionContext, config: GcConfig, storage: StorageResource) -> int:
    st = storage.storage
    removed = remove_leftovers(st, find_leftovers(st, config.retention_hours))
    for leftover in removed:
        context.log.info(f"removed {leftover.describe()}")
    context.log.info(f"removed {len(removed)} leftover folder(s) under {st.uri()}")
    return len(removed)


@dg.job(description="Storage garbage collection (same as `marin gc`)", tags={"marin/purpose": "gc"})
def storage_gc_job():
    remove_storage_leftovers()


storage_gc_schedule = dg.ScheduleDefinition(
    name="storage_gc_schedule", job=storage_gc_job, cron_schedule="30 4 * * *", execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="04:30 UTC: remove leftovers older than the retention (off by default)",
)
