"""Chosen per page: documentation markup gets the docs extractor, every other page the web extractor.

The web extractor's main-content heuristic drops documentation's notes and tips (asides to it); the
docs extractor keeps them but keeps more furniture on news pages. A page says which it is by its
own markup: the generators and themes of documentation (Sphinx / Docutils, DocBook, MkDocs, Read the
Docs, Docusaurus) leave classes, roles and generator tags that news and blog templates do not use.
Measured on the shipped documentation pages and the article gold set: docs/extraction.md.
"""

from __future__ import annotations

from pydantic import Field, field_validator
from resiliparse.parse.html import CSSParserException, HTMLTree

from marin_assets.core.recipes import Recipe
from marin_assets.data.extract.extractors.base import Resolve, register

DOCUMENTATION_MARKERS = [
    # Sphinx / Docutils (docs.python.org, most Python projects), Read the Docs' theme
    "meta[name=generator][content^=Docutils]", "meta[name=generator][content^=Sphinx]",
    "div.sphinxsidebar", "div.bodywrapper", "div.rst-content", "div.admonition",
    # DocBook (docbook-xsl, Publican: the Debian handbook)
    "meta[name=generator][content*=DocBook]", "div.titlepage", "ul.docnav",
    # MkDocs (Material), Docusaurus
    "meta[name=generator][content*=mkdocs]", "div.md-content", "meta[name=generator][content^=Docusaurus]",
    "div.theme-admonition",
]  # fmt: skip


class AutoOptions(Recipe):
    docs: str = Field(description="name of the configured extractor for documentation pages")
    web: str = Field(description="name of the configured extractor for every other page")
    markers: list[str] = Field(default_factory=lambda: list(DOCUMENTATION_MARKERS), min_length=1,
                               description="CSS selectors; a page matching any of them is documentation")

    @field_validator("markers")
    @classmethod
    def _selectors_parse(cls, markers: list[str]) -> list[str]:
        probe = HTMLTree.parse("<html><body></body></html>").document
        for marker in markers:
            try:
                probe.query_selector(marker)
            except CSSParserException as exc:
                raise ValueError(f"marker {marker!r} is not a CSS selector: {exc}") from exc
        return markers

    def refers_to(self) -> list[str]:
        return [self.docs, self.web]


def is_documentation(tree: HTMLTree, selector: str) -> bool:
    return tree.document is not None and tree.document.query_selector(selector) is not None


@register("auto")
class AutoExtractor:
    Options = AutoOptions

    def __init__(self, options: AutoOptions, resolve: Resolve):
        self.options = options
        self.docs, self.web = resolve(options.docs), resolve(options.web)
        self._selector = ", ".join(options.markers)

    def choose(self, html: str):
        """The extractor this page gets."""
        return self.docs if is_documentation(HTMLTree.parse(html), self._selector) else self.web

    def extract(self, html: str) -> str:
        return self.choose(html).extract(html)
