"""HTML extractors, keyed by the `kind` a recipe names. A new extractor = one module here + its import."""

from marin_assets.data.extractors import auto, fallback, resiliparse, trafilatura  # noqa: F401  (they register)
from marin_assets.data.extractors.base import EXTRACTORS, Extractor, options_for, register

__all__ = ["EXTRACTORS", "Extractor", "options_for", "register"]
