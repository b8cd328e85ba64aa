import dagster as dg

from marin_assets.data.clean_assets import CLEAN_ASSETS, CLEAN_CHECKS
from marin_assets.data.dedup_check_assets import DEDUP_CHECKS
from marin_assets.data.eval_assets import EVAL_ASSETS
from marin_assets.data.quality_assets import QUALITY_ASSETS
from marin_assets.data.raw_assets import RAW_ASSETS, RAW_CHECKS, RAW_SENSORS
from marin_assets.data.report_assets import REPORT_ASSETS

defs = dg.Definitions(
    assets=[*RAW_ASSETS, *EVAL_ASSETS, *QUALITY_ASSETS, *CLEAN_ASSETS, *REPORT_ASSETS],
    asset_checks=[*RAW_CHECKS, *CLEAN_CHECKS, *DEDUP_CHECKS],
    sensors=RAW_SENSORS,
)
