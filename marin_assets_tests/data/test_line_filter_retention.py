"""Real hard-wrapped text (the sample's Debian license texts) is kept whole, not as fragments."""

from __future__ import annotations

import statistics

from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.extract.extractor_choice import html_to_text
from marin_assets.data.clean.filters.c4 import C4Config
from marin_assets.data.clean.filters.pipeline import run_filters
from marin_assets.data.clean.filters.reflow import reflow
from marin_assets.data.clean.filters.text import retained_fraction
from marin_assets.data.clean.normalize import normalize_text
from marin_assets.data.formats.readers import RawRecord, list_source_files, read_file
from marin_assets.data.sources.source_registry import load_sources


def license_texts() -> list[str]:
    spec = load_sources().get("debian_licenses")
    return [normalize_text(rec.content) for path in list_source_files(spec)
            for rec in read_file(path, spec) if isinstance(rec, RawRecord)]  # fmt: skip


def test_kept_license_texts_keep_at_least_90_percent_of_their_characters():
    settings = load_cleaning_recipe().filters
    texts = license_texts()
    outcomes = [run_filters(text, settings) for text in texts]
    kept = [retained_fraction(text, o.text) for text, o in zip(texts, outcomes, strict=True) if o.kept]
    assert len(kept) >= 10, [o.reason for o in outcomes]
    assert min(kept) >= 0.9 and statistics.median(kept) >= 0.98
    # Whatever was removed is accounted for by named line rules.
    for text, o in zip(texts, outcomes, strict=True):
        if o.kept and retained_fraction(text, o.text) < 1.0:
            assert o.stats["line_removed_chars"], o.stats


def test_without_reflow_and_with_c4s_terminal_punctuation_rule_the_texts_are_shredded_or_rejected():
    """The failure the issue describes, kept as a regression: C4 as published keeps ~15% of wrapped text."""
    shipped = load_cleaning_recipe().filters
    before = shipped.model_copy(update={"reflow": None, "c4": C4Config(filter_no_terminal_punct=True)})
    outcomes = [run_filters(text, before) for text in license_texts()]
    assert not any(o.kept for o in outcomes)  # with the 30% budget, none is kept as fragments
    assert sum(o.reason == "c4:removed_char_frac" for o in outcomes) >= 8


def test_extracted_documentation_pages_are_not_reflowed():
    """Code, tables of contents and command output in HTML pages keep their line breaks."""
    cfg = load_cleaning_recipe().filters.reflow
    for name in ("python_docs", "debian_handbook"):
        spec = load_sources().get(name)
        for path in list_source_files(spec):
            for rec in read_file(path, spec):
                text = normalize_text(html_to_text(rec.content))
                assert reflow(text, cfg) == text, rec.id
