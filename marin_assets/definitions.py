"""The one code location: merges each stage's definitions and binds resources for MARIN_ENV."""

import dagster as dg

from marin_assets.core.known_warnings import silence_known_warnings

silence_known_warnings()  # before the stage modules define their assets  # noqa: E402

# Stage modules, not their Definitions objects: Dagster allows one Definitions at module scope.
from marin_assets.data import definitions as data
from marin_assets.governance import definitions as governance
from marin_assets.resources import executor_for, resources_for
from marin_assets.resources.stage_jobs import stage_jobs
from marin_assets.scaling import definitions as scaling
from marin_assets.tokenize import definitions as tokenize
from marin_assets.train import definitions as train

# Declarative automation (the fits re-materialize when a scaling run lands) runs by default; Dagster's
# implicit default sensor starts stopped on a fresh instance, so it is declared here under its name.
automation_sensor = dg.AutomationConditionSensorDefinition(
    "default_automation_condition_sensor",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING,
)

STAGES = (data.defs, tokenize.defs, train.defs, scaling.defs, governance.defs)

defs = dg.Definitions.merge(
    *STAGES,
    dg.Definitions(
        resources=resources_for(),
        executor=executor_for(),
        sensors=[automation_sensor],
        # One named job per stage (and partitions definition), so the runs list says what ran.
        jobs=stage_jobs([a for stage in STAGES for a in stage.assets or []]),
    ),
)
