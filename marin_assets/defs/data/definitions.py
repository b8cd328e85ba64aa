"""The data stage: raw sources, cleaning, eval sets, the quality classifier, data reports, the source sensor."""

import dagster as dg

from marin_assets.defs.data.clean_assets import CLEAN_ASSETS, CLEAN_CHECKS
from marin_assets.defs.data.dedup_check_assets import DEDUP_CHECKS
from marin_assets.defs.data.eval_assets import EVAL_ASSETS
from marin_assets.defs.data.quality_assets import QUALITY_ASSETS
from marin_assets.defs.data.raw_assets import RAW_ASSETS, RAW_CHECKS, build_source_files_sensor, raw_corpus
from marin_assets.defs.data.report_assets import REPORT_ASSETS
from marin_assets.core.stage_job_names import job_name_for

DATA_ASSETS = [*RAW_ASSETS, *EVAL_ASSETS, *QUALITY_ASSETS, *CLEAN_ASSETS, *REPORT_ASSETS]

defs = dg.Definitions(
    assets=DATA_ASSETS,
    asset_checks=[*RAW_CHECKS, *CLEAN_CHECKS, *DEDUP_CHECKS],
    # the stage job definitions.py derives from the graph: data assets are all in this stage
    sensors=[build_source_files_sensor(job_name_for(DATA_ASSETS, raw_corpus.key))],
)
