"""A fast extractor with a second opinion: when the primary's output looks wrong, ask the fallback.

"Looks wrong" = shorter than min_chars (an empty or near-empty result usually means the main-content
heuristic dropped the article, e.g. one inside a `div class="header"`). The longer answer wins, so a
page that really is short keeps the primary's text.
"""

from __future__ import annotations

from pydantic import Field

from marin_assets.core.recipes import Recipe
from marin_assets.data.extract.extractors.base import Resolve, register


class FallbackOptions(Recipe):
    primary: str = Field(description="name of the configured extractor tried first")
    fallback: str = Field(description="name of the configured extractor used when the primary's text looks wrong")
    min_chars: int = Field(default=200, ge=0, description="primary text shorter than this looks wrong")

    def refers_to(self) -> list[str]:
        return [self.primary, self.fallback]


@register("fallback")
class FallbackExtractor:
    Options = FallbackOptions

    def __init__(self, options: FallbackOptions, resolve: Resolve):
        self.options = options
        self.primary = resolve(options.primary)
        self._resolve = resolve
        self._fallback = None  # built on first need: trafilatura's import costs about a second

    @property
    def fallback(self):
        if self._fallback is None:
            self._fallback = self._resolve(self.options.fallback)
        return self._fallback

    def extract(self, html: str) -> str:
        text = self.primary.extract(html)
        if len(text) >= self.options.min_chars:
            return text
        second = self.fallback.extract(html)
        return second if len(second) > len(text) else text
