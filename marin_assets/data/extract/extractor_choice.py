"""Which extractor turns a source's HTML into text: named extractor configurations, one chosen per source.

cleaning.yaml `extraction:` names configurations (`kind` = a registered extractor, plus its options),
the default one, per-source choices, and the per-record time limit (enforced by extraction_worker).
"""

from __future__ import annotations

from functools import cache

from pydantic import Field, model_validator

from marin_assets.core.recipes import Recipe
from marin_assets.data.extract.extractors import EXTRACTORS, Extractor, options_for

# Page furniture resiliparse's main-content heuristic keeps on news-style pages: the headline (not
# part of an article body), <header> blocks, photo captions and galleries, share / newsletter /
# related-story / cookie boxes. Measured with benchmarks/extraction_quality.py.
ARTICLE_SKIP = ["h1", "header", "[class*=caption]", "[class*=gallery]", "[class*=newsletter]",
                "[class*=share]", "[class*=related]", "[class*=cookie]", "[id*=cookie]", "[class*=footer]"]  # fmt: skip
# Documentation notes and sidebars (DocBook, Sphinx admonitions) are prose the heuristic would drop.
DOCS_KEEP = ["div.sidebar", "div.note", "div.tip", "div.warning", "div.important", "div.caution",
             "div.admonition", "div.topic", "aside.note"]  # fmt: skip


class ExtractorSpec(Recipe):
    kind: str = Field(description=f"a registered extractor: {sorted(EXTRACTORS)}")
    options: dict = Field(default_factory=dict, description="the extractor's own options (validated by it)")

    @model_validator(mode="after")
    def _options_valid(self) -> ExtractorSpec:
        options_for(self.kind, self.options)
        return self


def _default_extractors() -> dict[str, ExtractorSpec]:
    return {
        "article": ExtractorSpec(kind="resiliparse", options={"skip_elements": ARTICLE_SKIP}),
        "docs": ExtractorSpec(kind="resiliparse", options={"keep_elements": DOCS_KEEP}),
        "trafilatura": ExtractorSpec(kind="trafilatura"),
        "article_or_trafilatura": ExtractorSpec(
            kind="fallback", options={"primary": "article", "fallback": "trafilatura", "min_chars": 200}
        ),
        "docs_or_trafilatura": ExtractorSpec(
            kind="fallback", options={"primary": "docs", "fallback": "trafilatura", "min_chars": 200}
        ),
        "auto": ExtractorSpec(kind="auto", options={"docs": "docs_or_trafilatura", "web": "article_or_trafilatura"}),
    }


class ExtractionSettings(Recipe):
    default: str = Field(default="auto", description="extractor for sources not listed (auto: chosen per page)")
    sources: dict[str, str] = Field(default_factory=dict, description="source name -> extractor name")
    timeout_seconds: float | None = Field(
        default=5.0, gt=0,
        description="per-record limit in CPU seconds of the extraction process (wall time would depend on the "
                    "machine's load); a slower page is quarantined as extraction_timeout"
    )
    extractors: dict[str, ExtractorSpec] = Field(default_factory=_default_extractors)

    @model_validator(mode="after")
    def _names_resolve(self) -> ExtractionSettings:
        for name in [self.default, *self.sources.values()]:
            if name not in self.extractors:
                raise ValueError(f"extractor {name!r} is not configured; configured: {sorted(self.extractors)}")
        for name in self.extractors:
            self._check_references(name, ())
        return self

    def _check_references(self, name: str, seen: tuple[str, ...]) -> None:
        """Names an extractor refers to (a fallback's primary and fallback) exist and form no cycle."""
        if name in seen:
            raise ValueError(f"extractor {name!r} refers to itself: {' -> '.join((*seen, name))}")
        if name not in self.extractors:
            raise ValueError(f"extractor {name!r} (used by {seen[-1]!r}) is not configured")
        spec = self.extractors[name]
        for other in getattr(options_for(spec.kind, spec.options), "refers_to", lambda: [])():
            self._check_references(other, (*seen, name))

    def name_for(self, source: str | None) -> str:
        return self.sources.get(source, self.default) if source else self.default


def build_extractor(settings: ExtractionSettings, name: str) -> Extractor:
    """The configured extractor `name`, with the extractors it refers to (validated acyclic) built too."""
    spec = settings.extractors[name]
    return EXTRACTORS[spec.kind](options_for(spec.kind, spec.options), lambda other: build_extractor(settings, other))


@cache
def _default() -> Extractor:
    settings = ExtractionSettings()
    return build_extractor(settings, settings.default)


def html_to_text(html: str) -> str:
    """Main-content text of a page with the default extractor (for benchmarks and tools)."""
    return _default().extract(html)
