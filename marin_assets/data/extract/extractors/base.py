"""The extractor protocol and registry: an extractor is one module that registers a class by name.

A recipe names an extractor `kind` (the registry key) and its options; the class validates its
options with its own Recipe model, so a typo in cleaning.yaml fails on load, naming the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from marin_assets.core.recipes import Recipe
from marin_assets.core.registries import Registry


class Extractor(Protocol):
    """HTML string -> main-content text (paragraphs separated by blank lines). Pure and deterministic."""

    Options: type[Recipe]

    def extract(self, html: str) -> str: ...


# Builds another configured extractor by its recipe name (the fallback extractor combines two).
Resolve = Callable[[str], Extractor]
ExtractorFactory = Callable[[Recipe, Resolve], Extractor]

# Every module of this package is imported on the first lookup: a new extractor is one new module.
EXTRACTORS = Registry("extractor kind", package="marin_assets.data.extract.extractors")


def register(kind: str):
    """Class decorator: make the extractor available to recipes as `kind`."""
    return EXTRACTORS.register(kind)


def options_for(kind: str, options: Mapping) -> Recipe:
    return EXTRACTORS.lookup(kind).Options.model_validate(dict(options))
