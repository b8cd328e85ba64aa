"""resiliparse's HTML-to-text with its main-content heuristic, plus CSS selectors to drop or protect.

`skip_elements` drops page furniture the heuristic keeps (headline, caption, gallery, share bars);
`keep_elements` protects blocks it would drop: documentation notes and sidebars (DocBook's
`div.sidebar` holds the handbook's TIP / NOTE prose) lose the class and id that mark them as asides.
"""

from __future__ import annotations

from pydantic import Field
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree

from marin_assets.core.recipes import Recipe
from marin_assets.data.extract.extractors.base import Resolve, register


class ResiliparseOptions(Recipe):
    main_content: bool = Field(default=True, description="drop navigation, headers, footers, asides")
    comments: bool = Field(default=False, description="keep reader comment sections")
    post_meta: bool = Field(default=False, description="keep post metadata blocks (author, date, tags)")
    list_bullets: bool = True
    alt_texts: bool = False
    links: bool = False
    form_fields: bool = False
    noscript: bool = False
    skip_elements: list[str] = Field(default_factory=list, description="CSS selectors removed before extraction")
    keep_elements: list[str] = Field(default_factory=list, description="CSS selectors main_content must keep")


@register("resiliparse")
class ResiliparseExtractor:
    Options = ResiliparseOptions

    def __init__(self, options: ResiliparseOptions, resolve: Resolve | None = None):
        self.options = options
        self._flags = options.model_dump(exclude={"skip_elements", "keep_elements"})
        self._keep = ", ".join(options.keep_elements)

    def extract(self, html: str) -> str:
        tree = HTMLTree.parse(html)
        if self._keep and tree.body is not None:
            for element in tree.body.query_selector_all(self._keep):
                element.class_name = ""
                element.id = ""
        text = extract_plain_text(
            tree, preserve_formatting=True, skip_elements=self.options.skip_elements or None, **self._flags
        )
        return text.strip()
