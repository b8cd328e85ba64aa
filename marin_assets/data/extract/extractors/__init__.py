"""HTML extractors, keyed by the `kind` a recipe names. A new extractor = one module here (EXTRACTORS finds it)."""

from marin_assets.data.extract.extractors.base import EXTRACTORS, Extractor, options_for, register

__all__ = ["EXTRACTORS", "Extractor", "options_for", "register"]
