"""The tokenize stage: tokenizer, tokenized sources and mixtures, built from their recipes when the stage loads."""

import dagster as dg

from marin_assets.defs.tokenize.tokenize_assets import build_tokenize_assets
from marin_assets.defs.tokenize.tokenize_checks import build_tokenize_checks


def build_stage_defs() -> dg.Definitions:
    return dg.Definitions(assets=build_tokenize_assets(), asset_checks=build_tokenize_checks())
