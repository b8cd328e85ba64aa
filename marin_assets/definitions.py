"""The one code location: merges each stage's definitions and binds resources for MARIN_ENV."""

import dagster as dg

# Stage modules, not their Definitions objects: Dagster allows one Definitions at module scope.
from marin_assets.data import definitions as data
from marin_assets.governance import definitions as governance
from marin_assets.resources import executor_for, resources_for
from marin_assets.scaling import definitions as scaling
from marin_assets.tokenize import definitions as tokenize
from marin_assets.train import definitions as train

defs = dg.Definitions.merge(
    data.defs,
    tokenize.defs,
    train.defs,
    scaling.defs,
    governance.defs,
    dg.Definitions(resources=resources_for(), executor=executor_for()),
)
