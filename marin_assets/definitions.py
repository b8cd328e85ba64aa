"""The one code location: the stage folders of defs/, loaded the Dagster way, plus resources for MARIN_ENV.

Each `defs/<stage>/` is a component (`defs.yaml` -> stage_loading.StageDefinitions) that loads on its own: a
bad recipe breaks only its stage, never the others. `dg check defs`, `dg list defs` and `dg launch` read this
module through `[tool.dg]` in pyproject.toml.
"""

from pathlib import Path

import dagster as dg

from marin_assets.core.known_warnings import silence_known_warnings

silence_known_warnings()  # before the stage modules define their assets  # noqa: E402

import marin_assets.defs  # noqa: E402
from marin_assets.resources import executor_for, resources_for  # noqa: E402
from marin_assets.stage_jobs import stage_jobs  # noqa: E402

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def load_stage_folders() -> dg.Definitions:
    """What `load_from_defs_folder` builds; from the package itself, so an installed wheel (no pyproject.toml
    beside it, as in the orchestrator image) loads the same tree."""
    return dg.ComponentTree.from_module(marin_assets.defs, PROJECT_ROOT).build_defs()


# Declarative automation (the fits re-materialize when a scaling run lands) runs by default; Dagster's
# implicit default sensor starts stopped on a fresh instance, so it is declared here under its name.
automation_sensor = dg.AutomationConditionSensorDefinition(
    "default_automation_condition_sensor",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING,
)



def build_definitions() -> dg.Definitions:
    stages = load_stage_folders()
    return dg.Definitions.merge(
        stages,
        dg.Definitions(
            resources=resources_for(),
            executor=executor_for(),
            sensors=[automation_sensor],
            # One named job per stage (and partitions definition), so the runs list says what ran.
            jobs=stage_jobs(list(stages.assets or [])),
        ),
    )


defs = build_definitions()  # the one Definitions object at module scope, as Dagster requires
