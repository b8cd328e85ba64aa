"""Extractors: the registry, recipe validation, and what each keeps on real pages."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from resiliparse.parse.html import HTMLTree

from marin_assets.core.recipes import Recipe
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.extract.extractor_choice import ExtractionSettings, build_extractor
from marin_assets.data.extract.extractors import EXTRACTORS, register
from marin_assets.data.clean.normalize import normalize_text
from marin_assets.data.formats.readers import RawRecord, list_source_files, read_file
from marin_assets.data.sources.source_registry import load_sources

ARTICLE = " ".join(f"Sentence {i} of the article says something worth reading about the harbour." for i in range(12))


def _page(body: str) -> str:
    return f"<html><head><title>t</title></head><body>{body}</body></html>"


def _handbook_page(name: str) -> str:
    spec = load_sources().get("debian_handbook")
    for path in list_source_files(spec):
        for rec in read_file(path, spec):
            if isinstance(rec, RawRecord) and rec.url.endswith("/" + name):
                return rec.content
    raise AssertionError(f"{name} not in the handbook sample")


def test_registry_has_the_shipped_kinds_and_a_new_one_is_one_class():
    assert {"resiliparse", "trafilatura", "fallback"} <= EXTRACTORS.keys()

    class ShoutOptions(Recipe):
        suffix: str = "!"

    @register("shout_for_test")
    class Shout:
        Options = ShoutOptions

        def __init__(self, options, resolve):
            self.options = options

        def extract(self, html: str) -> str:
            return html.upper() + self.options.suffix

    try:
        settings = ExtractionSettings(extractors={"s": {"kind": "shout_for_test", "options": {"suffix": "?"}}},
                                      default="s")  # fmt: skip
        assert build_extractor(settings, "s").extract("hi") == "HI?"
    finally:
        del EXTRACTORS["shout_for_test"]


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"extractors": {"a": {"kind": "nope"}}, "default": "a"}, "unknown extractor kind 'nope'"),
        ({"extractors": {"a": {"kind": "resiliparse", "options": {"comment": True}}}, "default": "a"}, "comment"),
        ({"default": "missing"}, "extractor 'missing' is not configured"),
        ({"sources": {"x": "missing"}}, "extractor 'missing' is not configured"),
        ({"extractors": {"a": {"kind": "fallback", "options": {"primary": "a", "fallback": "b"}}}, "default": "a"},
         "refers to itself"),
    ],
)  # fmt: skip
def test_bad_extraction_recipes_fail_naming_the_problem(bad, message):
    with pytest.raises(ValidationError, match=message):
        ExtractionSettings(**bad)


def test_shipped_recipe_chooses_per_page_by_default():
    extraction = load_cleaning_recipe().extraction
    assert extraction.sources == {}  # no source names its extractor: the page's markup decides
    assert extraction.name_for("debian_handbook") == extraction.name_for("dirty_web") == extraction.default == "auto"
    assert ExtractionSettings().default == "auto"


def _python_docs_page(name: str) -> str:
    spec = load_sources().get("python_docs")
    for path in list_source_files(spec):
        for rec in read_file(path, spec):
            if isinstance(rec, RawRecord) and rec.url.endswith("/" + name):
                return rec.content
    raise AssertionError(f"{name} not in the python_docs sample")


def test_auto_gives_documentation_pages_the_docs_extractor_and_articles_the_web_one():
    settings = load_cleaning_recipe().extraction
    auto = build_extractor(settings, "auto")
    handbook = _handbook_page("sect.apt-get.html")
    assert auto.choose(handbook) is auto.docs
    # the TIP sidebar prose the web extractor drops is kept
    assert "APT can download “diff” files" in auto.extract(handbook)
    assert "APT can download “diff” files" not in build_extractor(settings, "article_or_trafilatura").extract(handbook)
    sphinx = _python_docs_page("faq/index.html")
    assert auto.choose(sphinx) is auto.docs
    assert "Programming FAQ" in auto.extract(sphinx)  # a page of links: the docs extractor's fallback answers
    article = _page(f"<article><h1>Harbour news</h1><div class='note'><p>{ARTICLE}</p></div></article>")
    assert auto.choose(article) is auto.web
    assert auto.extract(article) == build_extractor(settings, "article_or_trafilatura").extract(article)


@pytest.mark.parametrize("marker, page", [
    ("mkdocs", "<div class='md-content'><article class='md-content__inner'><p>x</p></article></div>"),
    ("docusaurus", "<head><meta name='generator' content='Docusaurus v3'></head><div class='theme-admonition'>x</div>"),
    ("read the docs", "<div class='rst-content'><div class='admonition note'><p>x</p></div></div>"),
])  # fmt: skip
def test_auto_recognises_other_documentation_generators(marker, page):
    auto = build_extractor(load_cleaning_recipe().extraction, "auto")
    assert auto.choose(f"<html>{page}</html>") is auto.docs, marker


def test_auto_markers_must_be_css_selectors():
    with pytest.raises(ValidationError, match="marker 'div\\[' is not a CSS selector"):
        ExtractionSettings(extractors={**ExtractionSettings().extractors,
                                       "auto": {"kind": "auto", "options": {"docs": "docs", "web": "article",
                                                                           "markers": ["div["]}}})


def test_handbook_page_keeps_section_headings_and_sidebar_prose():
    settings = load_cleaning_recipe().extraction
    html = _handbook_page("sect.apt-get.html")
    text = normalize_text(build_extractor(settings, settings.name_for("debian_handbook")).extract(html))
    tree = HTMLTree.parse(html)
    headings = [normalize_text(h.text).strip() for h in tree.body.query_selector_all("h2, h3, h4")]
    assert len(headings) >= 9 and "6.2.1. Initialization" in headings
    assert [h for h in headings if h not in text] == []
    # TIP sidebars: their title and every paragraph of their prose.
    notes = [normalize_text(p.text).strip() for p in tree.body.query_selector_all("div.sidebar div.para")]
    assert len(notes) > 5 and [p for p in notes if p not in text] == []
    assert "TIP Incremental updates" in text
    assert "APT can download “diff” files containing the changes since the previous update" in text
    # The main-content heuristic alone drops those sidebars (why the docs extractor protects them).
    plain = ExtractionSettings(extractors={"r": {"kind": "resiliparse"}}, default="r")
    assert "APT can download “diff” files" not in build_extractor(plain, "r").extract(html)


def test_article_extractor_drops_comments_headline_and_captions():
    settings = load_cleaning_recipe().extraction
    html = _page(
        "<article><h1>Harbour news</h1><figure><img src=x><figcaption class='caption'>Photo: A. Person</figcaption>"
        f"</figure><p>{ARTICLE}</p></article>"
        "<section id='comments' class='comments'><h3>Comments</h3>"
        "<div class='comment'><p>First! This reader comment is not part of the article at all, really.</p></div></section>"
    )  # fmt: skip
    text = build_extractor(settings, "article").extract(html)
    assert ARTICLE in text
    assert "reader comment" not in text and "Harbour news" not in text and "Photo: A. Person" not in text


def test_fallback_answers_when_the_fast_extractor_returns_nothing():
    settings = load_cleaning_recipe().extraction
    html = _page(f"<header><div class='header'><p>{ARTICLE}</p><p>{ARTICLE}</p></div></header>")
    assert build_extractor(settings, "article").extract(html) == ""  # the article sits in a <header>
    text = build_extractor(settings, "article_or_trafilatura").extract(html)
    assert ARTICLE in text
