"""One partition per source in the registry; every per-source asset in the graph uses this."""

import dagster as dg

from marin_assets.data.curate.eval_sets import load_eval_sets
from marin_assets.data.sources.source_registry import load_sources

SOURCE_PARTITIONS = dg.StaticPartitionsDefinition(load_sources().names)
EVAL_SET_PARTITIONS = dg.StaticPartitionsDefinition(load_eval_sets().names)  # one per registered eval set
