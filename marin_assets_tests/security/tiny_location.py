"""A one-asset code location: starts in seconds, for tests about the server rather than the graph."""

import dagster as dg


@dg.asset
def hello() -> str:
    return "hello"


defs = dg.Definitions(assets=[hello])
