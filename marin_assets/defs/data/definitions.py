"""The data stage: raw sources, cleaning, eval sets, the quality classifier, data reports, the source sensor.

`build_stage_defs()` reads the stage's recipes (sources, eval sets, cleaning, quality classifier) when
the stage is loaded (stage_loading.StageDefinitions), never when a module is imported.
"""

import dagster as dg

from marin_assets.core.stage_job_names import job_name_for
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.curate.quality_classifier import load_quality_classifier_recipe
from marin_assets.data.sources.partitions import eval_set_partitions, source_partitions
from marin_assets.data.sources.source_files import require_known_formats
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.defs.data.clean_assets import build_clean_assets
from marin_assets.defs.data.dedup_check_assets import build_dedup_checks
from marin_assets.defs.data.eval_assets import build_eval_assets
from marin_assets.defs.data.quality_assets import build_quality_assets
from marin_assets.defs.data.raw_assets import RAW_KEY, build_raw_assets, build_source_files_sensor
from marin_assets.defs.data.report_assets import build_report_assets


def data_assets_and_checks() -> tuple[list, list]:
    """(the stage's assets, its asset checks), built from the recipes as they are now."""
    require_known_formats(load_sources())  # a format no class registers breaks the data stage at load
    cleaning, sources = load_cleaning_recipe(), source_partitions()
    raw_assets, raw_checks = build_raw_assets(sources)
    clean_assets, clean_checks = build_clean_assets(sources, cleaning)
    assets = [*raw_assets, *build_eval_assets(eval_set_partitions(), cleaning),
              *build_quality_assets(load_quality_classifier_recipe()), *clean_assets,
              *build_report_assets(sources, cleaning)]  # fmt: skip
    return assets, [*raw_checks, *clean_checks, *build_dedup_checks(sources)]


def build_stage_defs() -> dg.Definitions:
    assets, checks = data_assets_and_checks()
    # the stage job definitions.py derives from the graph: data assets are all in this stage
    return dg.Definitions(assets=assets, asset_checks=checks,
                          sensors=[build_source_files_sensor(job_name_for(assets, RAW_KEY))])
