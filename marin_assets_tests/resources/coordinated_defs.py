"""A tiny code location for the run coordinator's test: two stages, one partitioned differently."""

import dagster as dg

SOURCES = dg.StaticPartitionsDefinition(["web", "books"])


@dg.asset(group_name="data")
def registry() -> None:
    pass


@dg.asset(group_name="data", partitions_def=SOURCES)
def raw(registry) -> None:
    pass


@dg.asset(group_name="data", partitions_def=SOURCES)
def cleaned(raw) -> None:
    pass


defs = dg.Definitions(assets=[registry, raw, cleaned])
