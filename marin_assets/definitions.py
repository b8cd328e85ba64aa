"""The one code location: merges each stage's definitions and binds resources for MARIN_ENV."""

import dagster as dg

from marin_assets.data.definitions import defs as data_defs
from marin_assets.governance.definitions import defs as governance_defs
from marin_assets.resources import executor_for, resources_for
from marin_assets.scaling.definitions import defs as scaling_defs
from marin_assets.tokenize.definitions import defs as tokenize_defs
from marin_assets.train.definitions import defs as train_defs

defs = dg.Definitions.merge(
    data_defs,
    tokenize_defs,
    train_defs,
    scaling_defs,
    governance_defs,
    dg.Definitions(resources=resources_for(), executor=executor_for()),
)
