"""Warnings known to be harmless here, silenced by their exact text so that any other warning shows.

Dagster warns on every code-location load that features this graph relies on are beta/preview:
`observable_source_asset` (source_files), partitioned asset checks, the multi-to-single-dimension
partition mapping (downstream evaluations) and the defs-folder loader's own internals. Each is a deliberate choice,
recorded here once, instead of ~5 lines of noise in every CLI call, run worker and test.
"""

from __future__ import annotations

import warnings

KNOWN_MESSAGES = (
    r"Function `observable_source_asset` is currently in beta",
    r"Specifying a partitions_def on an AssetCheckSpec is currently in preview",
    # downstream evaluations are partitioned run x task set, each dimension mapped to its own upstream
    r"Class `MultiToSingleDimensionPartitionMapping` is currently in beta",
    # the defs-folder loader (load_from_defs_folder) itself: code references to each stage's defs.yaml,
    # module loading of the defs folder, and the scaffolders it lists
    r"Class `LocalFileCodeReference` is currently in beta",
    r"Class `CodeReferencesMetadataValue` is currently in beta",
    r"Function `load_definitions_from_module` is currently in preview",
    r"Function `load_definitions_from_modules` is currently in preview",
    r"Class `SparkDeclarativePipelineScaffolder` is currently in preview",
    r"Parameter `execution_type` of function `AssetsDefinition.__init__` is currently in beta",
    r"Parameter `owners` of initializer `SensorDefinition.__init__` is currently in beta",
)


def silence_known_warnings() -> None:
    for message in KNOWN_MESSAGES:
        warnings.filterwarnings("ignore", message=message)
