import dagster as dg

from marin_assets.defs.tokenize.tokenize_assets import TOKENIZE_ASSETS
from marin_assets.defs.tokenize.tokenize_checks import TOKENIZE_CHECKS

defs = dg.Definitions(assets=TOKENIZE_ASSETS, asset_checks=TOKENIZE_CHECKS)
