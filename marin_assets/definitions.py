"""The one code location: merges each stage's definitions and binds resources for MARIN_ENV.

Each stage loads on its own (stage_loading): a bad recipe breaks only its stage, never the others.
"""

import dagster as dg

import marin_assets.pool_wait  # noqa: F401  (runs waiting for a pool slot sleep, not spin)
from marin_assets.resources import executor_for, resources_for
from marin_assets.stage_loading import load_stage

# Stage modules, not their Definitions objects: Dagster allows one Definitions at module scope.
STAGES = (
    ("data", "marin_assets.data.definitions"),
    ("tokenize", "marin_assets.tokenize.definitions"),
    ("train", "marin_assets.train.definitions"),
    ("scaling", "marin_assets.scaling.definitions"),
    ("governance", "marin_assets.governance.definitions"),
)

defs = dg.Definitions.merge(
    *(load_stage(stage, module) for stage, module in STAGES),
    dg.Definitions(resources=resources_for(), executor=executor_for()),
)
