"""The one code location: merges each stage's definitions and binds resources for MARIN_ENV.

Each stage loads on its own (stage_loading): a bad recipe breaks only its stage, never the others.
"""

import dagster as dg

from marin_assets.core.known_warnings import silence_known_warnings

silence_known_warnings()  # before the stage modules define their assets  # noqa: E402

from marin_assets.resources import executor_for, resources_for  # noqa: E402
from marin_assets.resources.stage_jobs import stage_jobs  # noqa: E402
from marin_assets.stage_loading import load_stage  # noqa: E402

# Stage modules, not their Definitions objects: Dagster allows one Definitions at module scope.
STAGE_MODULES = (
    ("data", "marin_assets.data.definitions"),
    ("tokenize", "marin_assets.tokenize.definitions"),
    ("train", "marin_assets.train.definitions"),
    ("scaling", "marin_assets.scaling.definitions"),
    ("evaluation", "marin_assets.evaluation.definitions"),
    ("governance", "marin_assets.governance.definitions"),
)
STAGES = tuple(load_stage(stage, module) for stage, module in STAGE_MODULES)

# Declarative automation (the fits re-materialize when a scaling run lands) runs by default; Dagster's
# implicit default sensor starts stopped on a fresh instance, so it is declared here under its name.
automation_sensor = dg.AutomationConditionSensorDefinition(
    "default_automation_condition_sensor",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING,
)

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
