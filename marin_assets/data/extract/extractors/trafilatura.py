"""trafilatura's article extraction (slower, tuned on news pages); also the fallback's second opinion."""

from __future__ import annotations

from pydantic import Field

from marin_assets.core.recipes import Recipe
from marin_assets.data.extract.extractors.base import Resolve, register


class TrafilaturaOptions(Recipe):
    include_comments: bool = False
    include_tables: bool = True
    favor_precision: bool = False
    favor_recall: bool = False
    fast: bool = Field(default=True, description="skip trafilatura's own readability/justext second pass")


@register("trafilatura")
class TrafilaturaExtractor:
    Options = TrafilaturaOptions

    def __init__(self, options: TrafilaturaOptions, resolve: Resolve | None = None):
        import trafilatura  # imported here: a recipe that never uses it does not pay the import

        self._extract = trafilatura.extract
        self.options = options

    def extract(self, html: str) -> str:
        o = self.options
        # trafilatura 1.x (what datatrove pins) calls the `fast` switch no_fallback.
        text = self._extract(html, include_comments=o.include_comments, include_tables=o.include_tables,
                             favor_precision=o.favor_precision, favor_recall=o.favor_recall, no_fallback=o.fast)  # fmt: skip
        return (text or "").strip()
