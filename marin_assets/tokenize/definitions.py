import dagster as dg

from marin_assets.tokenize.assets import TOKENIZE_ASSETS
from marin_assets.tokenize.checks import TOKENIZE_CHECKS

defs = dg.Definitions(assets=TOKENIZE_ASSETS, asset_checks=TOKENIZE_CHECKS)
