"""Extractor per page: main text kept on documentation pages, F1 on the article gold set, one run.

Documentation: every page of the shipped samples (python_docs: Sphinx, debian_handbook: DocBook).
The reference is independent of every extractor: the plain text (resiliparse with main_content off:
no heuristic) of the page's main region (Sphinx `div[role=main]`, else the body) without its
navigation (DocBook's docnav, Sphinx's header links). Retention = the share of the reference's
4-gram shingles (multiset, as extraction_quality.py) found in the extractor's output.
Articles: the 181 gold pages of extraction_quality.py, same metric (F1 of precision and recall).
Each line: web (the extractor new sources got before: article_or_trafilatura), docs, auto (chosen
per page), and how many pages auto gave the docs extractor.
Targets: auto keeps the web extractor's article F1 and the docs extractor's retention on docs pages.

    .venv/bin/python benchmarks/docs_extraction.py [--data DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter

from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree

from extraction_quality import find_data, load_pages, page_counts, scores, shingles
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.extract.extractor_choice import build_extractor
from marin_assets.data.clean.normalize import normalize_text
from marin_assets.data.formats.readers import RawRecord, list_source_files, read_file
from marin_assets.data.sources.source_registry import load_sources

DOC_SOURCES = ("python_docs", "debian_handbook")
MAIN_REGION = "div[role=main]"
NAVIGATION = ["ul.docnav", "a.headerlink", "div.navheader", "div.navfooter", "nav"]
NAMES = {"web": "article_or_trafilatura", "docs": "docs", "auto": "auto"}


def doc_pages(source: str) -> list[str]:
    spec = load_sources().get(source)
    return [rec.content for path in list_source_files(spec) for rec in read_file(path, spec)
            if isinstance(rec, RawRecord) and rec.content]


def reference_text(html: str) -> str:
    tree = HTMLTree.parse(html)
    region = tree.document.query_selector(MAIN_REGION) or tree.body
    return normalize_text(extract_plain_text(region.html, main_content=False, skip_elements=NAVIGATION))


def retention(reference: str, text: str) -> float:
    ref = shingles(reference)
    return sum((ref & shingles(text)).values()) / max(sum(ref.values()), 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="article benchmark folder (default: as extraction_quality.py)")
    args = parser.parse_args()
    settings = load_cleaning_recipe().extraction
    built = {label: build_extractor(settings, name) for label, name in NAMES.items()}
    auto = built["auto"]
    ok = True
    for source in DOC_SOURCES:
        pages = doc_pages(source)
        kept = {label: [retention(reference_text(h), normalize_text(e.extract(h))) for h in pages]
                for label, e in built.items()}
        chosen = Counter("docs" if auto.choose(h) is auto.docs else "web" for h in pages)
        print(f"{source}: {len(pages)} pages; auto chose docs for {chosen['docs']}")
        for label, values in kept.items():
            print(f"  {label:5s} retention mean {statistics.mean(values):.3f}  median {statistics.median(values):.3f}"
                  f"  min {min(values):.3f}")
        ok &= statistics.mean(kept["auto"]) >= statistics.mean(kept["docs"]) - 1e-9
    root = find_data(args.data)
    if root is None:
        print("articles: SKIP (gold set not found)")
        return 0 if ok else 1
    pages = load_pages(root, None)
    f1 = {}
    for label, extractor in built.items():
        f1[label] = scores([page_counts(truth, normalize_text(extractor.extract(html))) for _, html, truth in pages])
    chosen = Counter("docs" if auto.choose(html) is auto.docs else "web" for _, html, _ in pages)
    print(f"articles: {len(pages)} pages; auto chose docs for {chosen['docs']}")
    for label, (f, p, r) in f1.items():
        print(f"  {label:5s} F1 {f:.4f}  precision {p:.4f}  recall {r:.4f}")
    ok &= f1["auto"][0] >= f1["web"][0] - 1e-9
    print(f"targets (auto >= docs retention on docs pages, auto >= web F1 on articles): {'MET' if ok else 'NOT MET'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
