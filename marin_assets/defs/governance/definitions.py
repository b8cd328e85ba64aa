"""Governance: audit reports, the failure catalog, the nightly validation schedule, storage gc, run health.

The data-baseline checks partition by the registered sources and mixtures: built when the stage loads.
"""

import dagster as dg

from marin_assets.defs.governance.governance_assets import audit_report, failure_catalog
from marin_assets.defs.governance.data_baseline_checks import build_data_baseline_checks
from marin_assets.defs.governance.gc_schedule import storage_gc_job, storage_gc_schedule
from marin_assets.defs.governance.schedules import (
    nightly_validation_chain,
    nightly_validation_jobs,
    nightly_validation_schedule,
)
from marin_assets.defs.governance.run_health import dead_run_worker_sensor
from marin_assets.defs.governance.run_names import run_names_sensor
from marin_assets.defs.governance.sensors import failure_catalog_sensor



def build_stage_defs() -> dg.Definitions:
    return dg.Definitions(
        assets=[audit_report, failure_catalog],
        asset_checks=build_data_baseline_checks(),
        sensors=[failure_catalog_sensor, nightly_validation_chain, dead_run_worker_sensor, run_names_sensor],
        schedules=[nightly_validation_schedule, storage_gc_schedule],
        jobs=[*nightly_validation_jobs, storage_gc_job],
    )
