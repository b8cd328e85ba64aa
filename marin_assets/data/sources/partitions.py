"""One partition per source in the registry (and per eval set); every per-source asset in the graph uses these.

Functions, not module constants: the registry is read when a stage builds its definitions, never at import.
"""

import dagster as dg

from marin_assets.data.curate.eval_sets import load_eval_sets
from marin_assets.data.sources.source_registry import load_sources


def source_partitions() -> dg.StaticPartitionsDefinition:
    return dg.StaticPartitionsDefinition(load_sources().names)


def eval_set_partitions() -> dg.StaticPartitionsDefinition:
    """One partition per registered eval set."""
    return dg.StaticPartitionsDefinition(load_eval_sets().names)
