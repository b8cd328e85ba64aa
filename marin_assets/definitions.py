"""The one code location: merges each stage's definitions and binds resources for MARIN_ENV."""

import dagster as dg

from marin_assets.data.definitions import defs as data_defs
from marin_assets.resources import resources_for

defs = dg.Definitions.merge(
    data_defs,
    dg.Definitions(resources=resources_for()),
)
