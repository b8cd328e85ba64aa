"""HTML extractors, keyed by the `kind` a recipe names. A new extractor = one module here + its import."""

from marin_assets.data.extract.extractors import auto, fallback, resiliparse, trafilatura
from marin_assets.data.extract.extractors.base import EXTRACTORS, Extractor, options_for, register

__all__ = ["EXTRACTORS", "Extractor", "options_for", "register"]
