"""Warnings known to be harmless here, silenced by their exact text so that any other warning shows.

Dagster warns on every code-location load that three features this graph relies on are beta/preview:
`observable_source_asset` (source_files), partitioned asset checks and the multi-to-single-dimension
partition mapping (downstream evaluations). Each is a deliberate choice,
recorded here once, instead of ~5 lines of noise in every CLI call, run worker and test.
"""

from __future__ import annotations

import warnings

KNOWN_MESSAGES = (
    r"Function `observable_source_asset` is currently in beta",
    r"Specifying a partitions_def on an AssetCheckSpec is currently in preview",
    # downstream evaluations are partitioned run x task set, each dimension mapped to its own upstream
    r"Class `MultiToSingleDimensionPartitionMapping` is currently in beta",
)


def silence_known_warnings() -> None:
    for message in KNOWN_MESSAGES:
        warnings.filterwarnings("ignore", message=message)
