"""RecordCleaner.clean taken apart into timed stages, for benchmarks/real_corpus_throughput.py.

The stages are built from what the cleaner itself uses: its extractor (RecordCleaner.extractor, with the
recipe's time limit), the recipe's normalize / language / filter settings, the curation steps of
build_curation (the factory curation_job.curation_for calls; every step the recipe switches on and has
an input for, in its order) and the cleaner's MinHasher. They run in clean's order, each over the
documents still alive, and end with the same statuses, reasons and texts as clean (asserted by
marin_assets_tests/benchmarks/test_cleaning_stages.py, so a change in the cleaner breaks a test, not
the benchmark). Each filter is also timed alone on the documents that reach the filters (no effect
on the documents). Curation inputs for a benchmark: the shipped eval sets' n-gram index and a quality
model trained on the shipped sample sources, as the eval_set and quality_classifier assets make them.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from marin_assets.data.clean.cleaning_recipe import CleaningRecipe
from marin_assets.data.clean.cleaning_rows import (
    EMPTY_TEXT, EXTRACTION_FAILED, EXTRACTION_TIMEOUT, IGNORED, KEPT, QUARANTINED, REJECTED, RecordCleaner,
)
from marin_assets.data.curate.curation_steps import Curation, CurationInputs, build_curation
from marin_assets.data.dedup.dedup_keys import band_key_matrix, exact_key
from marin_assets.data.extract.extraction_worker import ExtractionTimeout
from marin_assets.data.clean.filters.pipeline import FilterSettings, run_filters
from marin_assets.data.clean.language_id import (
    drop_foreign_paragraphs, identify_language, identify_languages, language_rejection,
)
from marin_assets.data.clean.normalize import normalize_text
from marin_assets.data.formats.records import IgnoredRecord
from marin_assets.data.formats.readers import QuarantinedRecord, read_file
from marin_assets.data.curate.step_outcome import Value

WARM_TEXT = "Warm up: the model is loaded and the worker started before any stage is timed. " * 3


@dataclass
class Doc:
    id: str | None  # None for a record the reader quarantined
    text: str | None
    content_type: str | None = None
    status: str | None = None  # None while alive; then KEPT, REJECTED, QUARANTINED or IGNORED
    reason: str | None = None
    exact_key: str | None = None
    bands: list[int] | None = None
    quality_score: float | None = None
    step_counts: dict[str, int] = field(default_factory=dict)  # the curation steps' counts ("pii:email": 2)

    def end(self, status: str, reason: str | None) -> None:
        self.status, self.reason = status, reason


@dataclass
class StageTime:
    name: str
    docs: int  # documents in
    nbytes: int  # UTF-8 bytes in (raw HTML for extraction)
    wall: float
    dropped: int = 0  # documents the stage rejected or quarantined
    alone: bool = False  # measured alone on the filters' input, not part of the path's total


@dataclass
class Stage:
    name: str
    apply: Callable[[Doc], None]  # one document; ends it (Doc.end) or rewrites its text
    applies: Callable[[Doc], bool] = lambda doc: True
    apply_many: Callable[[list[Doc]], None] | None = None  # the stage over many documents at once, as the cleaner batches it
    timings: list[StageTime] = field(default_factory=list)


def _size(docs: list[Doc]) -> int:
    return sum(len(d.text.encode()) for d in docs if d.text is not None)


def read_stage(spec, files: list[str], max_record_bytes: int) -> tuple[list[Doc], StageTime]:
    """The product's readers; quarantined records become quarantined documents, as in the job."""
    start = time.perf_counter()
    records = [r for path in files for r in read_file(path, spec, max_record_bytes)]
    wall = time.perf_counter() - start
    # ignored places (a blank JSONL line) hold no document: they end as ignored, as in the job
    docs = [Doc(None, None, status=QUARANTINED, reason=r.reason) if isinstance(r, QuarantinedRecord)
            else Doc(None, None, status=IGNORED, reason=r.reason) if isinstance(r, IgnoredRecord)
            else Doc(r.id, r.content, r.content_type) for r in records]  # fmt: skip
    bad = [d for d in docs if d.status in (QUARANTINED, IGNORED)]  # ended at the read
    return docs, StageTime("read", len(docs), _size(docs), wall, len(bad))


def cleaner_stages(cleaner: RecordCleaner) -> list[Stage]:
    """The per-document stages of cleaner.clean, in its order, from the cleaner's own settings and objects."""
    recipe = cleaner.recipe

    def extract(doc: Doc) -> None:
        try:
            doc.text = cleaner.extractor().extract(doc.text)
        except ExtractionTimeout as exc:
            doc.end(QUARANTINED, f"{EXTRACTION_TIMEOUT}: {exc}")
        except Exception as exc:
            doc.end(QUARANTINED, f"{EXTRACTION_FAILED}: {type(exc).__name__}: {exc}"[:500])

    def normalize(doc: Doc) -> None:
        doc.text = normalize_text(doc.text, recipe.normalize.form)
        if not doc.text:
            doc.end(REJECTED, EMPTY_TEXT)

    lang = recipe.language

    def language(doc: Doc) -> None:
        language_many([doc])

    def language_many(docs: list[Doc]) -> None:  # clean_batches identifies a batch's documents in one call
        for doc, (found, score) in zip(docs, identify_languages([d.text for d in docs], lang.samples,
                                                                lang.sample_chars, lang.identifier), strict=True):  # fmt: skip
            if reason := language_rejection(found, score, lang.allowlist, lang.min_score):
                doc.end(REJECTED, reason)

    def paragraphs(doc: Doc) -> None:
        doc.text = drop_foreign_paragraphs(doc.text, lang.allowlist, lang.paragraph_min_chars, lang.min_score,
                                           lang.identifier).text

    def filters(doc: Doc) -> None:
        outcome = run_filters(doc.text, recipe.filters, recipe.words)
        if outcome.kept:
            doc.text = outcome.text
        else:
            doc.end(REJECTED, outcome.reason)

    stages = [Stage("extract", extract, lambda doc: doc.content_type == "html"), Stage("normalize", normalize)]
    if lang.allowlist:
        stages.append(Stage("language id (whole document)", language, apply_many=language_many))
        if lang.drop_paragraphs:
            stages.append(Stage("language paragraph drop", paragraphs))
    stages.append(Stage("filters (recipe order)", filters))
    for step in cleaner.curation.steps if cleaner.curation else []:
        stages.append(Stage(f"curation {step.name}", _curation_apply(step)))
    return stages


def _curation_apply(step) -> Callable[[Doc], None]:
    def apply(doc: Doc) -> None:
        outcome = step.apply(doc.text)
        doc.quality_score = outcome.fields.get("quality_score", doc.quality_score)
        for key, n in outcome.counts.items():
            doc.step_counts[key] = doc.step_counts.get(key, 0) + n
        if outcome.reject:
            doc.end(REJECTED, outcome.reject)
        else:
            doc.text = outcome.text

    return apply


def filters_alone(settings: FilterSettings, texts: list[str]) -> list[StageTime]:
    """Each filter the recipe switches on (reflow included), alone on the same texts."""
    names = ["reflow", *settings.filter_options()]
    off = {name: None for name in names}
    out = []
    nbytes = sum(len(t.encode()) for t in texts)
    for name in names:
        if getattr(settings, name) is None:
            continue
        alone = FilterSettings(**{**off, name: getattr(settings, name)})
        start = time.perf_counter()
        dropped = sum(not run_filters(t, alone).kept for t in texts)
        out.append(StageTime(f"  filter {name} alone", len(texts), nbytes, time.perf_counter() - start, dropped, True))
    return out


def dedup_keys(cleaner: RecordCleaner, kept: list[Doc]) -> StageTime:
    """Exact keys and LSH bands of the kept documents, as clean and _add_bands compute them."""
    start = time.perf_counter()
    if cleaner.recipe.dedup.exact:
        for doc in kept:
            doc.exact_key = exact_key(doc.text)
    if cleaner.hasher is not None and kept:
        signatures, has_words = cleaner.hasher.signatures([d.text for d in kept])
        keys = band_key_matrix(signatures, cleaner.recipe.dedup.bands, cleaner.recipe.dedup.rows).tolist()
        for doc, key, words in zip(kept, keys, has_words, strict=True):
            doc.bands = key if words else None
    return StageTime("dedup keys (exact + MinHash LSH)", len(kept), _size(kept), time.perf_counter() - start)


def write_stage(kept: list[Doc], source: str) -> StageTime:
    """The kept documents as one DOCUMENT_SCHEMA file, sorted by id, with the job's Parquet writer."""
    import pyarrow as pa

    from marin_assets.core.schemas import DOCUMENT_SCHEMA
    from marin_assets.data.spark.parquet_output import write_arrow_table

    start = time.perf_counter()
    rows = {"id": [d.id for d in kept], "source": [source] * len(kept), "url": [None] * len(kept),
            "text": [d.text for d in kept], "metadata": [json.dumps({})] * len(kept),
            "raw_length": [len(d.text) for d in kept], "quality_score": [d.quality_score for d in kept]}  # fmt: skip
    table = pa.Table.from_pydict(rows, schema=DOCUMENT_SCHEMA).sort_by("id")
    with tempfile.TemporaryDirectory() as tmp:
        write_arrow_table(table, f"{tmp}/part-00000.parquet")
    return StageTime("write (Arrow + Parquet zstd)", len(kept), _size(kept), time.perf_counter() - start)


def run_stages(spec, files: list[str], recipe: CleaningRecipe, curation: Curation | None) -> tuple[list[Doc], list[StageTime]]:
    """Every document of `files` through the cleaner's stages; (documents with their end, timings in order)."""
    docs, read = read_stage(spec, files, recipe.max_record_bytes)
    timings = [read]
    cleaner = RecordCleaner(recipe, spec.name, curation)
    try:
        stages = cleaner_stages(cleaner)
        _warm_up(cleaner, stages)
        for stage in stages:
            alive = [d for d in docs if d.status is None and stage.applies(d)]
            if stage.name.startswith("filters"):
                timings.extend(filters_alone(recipe.filters, [d.text for d in alive]))
            nbytes = _size(alive)
            start = time.perf_counter()
            if stage.apply_many is not None:
                stage.apply_many(alive)
            else:
                for doc in alive:
                    stage.apply(doc)
            wall = time.perf_counter() - start
            timings.append(StageTime(stage.name, len(alive), nbytes, wall, sum(d.status is not None for d in alive)))
    finally:
        cleaner.close()
    kept = [d for d in docs if d.status is None]
    for doc in kept:
        doc.end(KEPT, None)
    timings.append(dedup_keys(cleaner, kept))
    timings.append(write_stage(kept, spec.name))
    return docs, timings


def _warm_up(cleaner: RecordCleaner, stages: list[Stage]) -> None:
    """Start the extraction child process and load the models before the clock runs."""
    if any(s.name == "extract" for s in stages):
        cleaner.extractor().extract(f"<html><body><p>{WARM_TEXT}</p></body></html>")
    identify_language(WARM_TEXT)
    for step in cleaner.curation.steps if cleaner.curation else []:
        step.apply(WARM_TEXT)
    write_stage([Doc("warm", WARM_TEXT)], "warm")  # the Parquet writer's first call loads its codec


def shipped_eval_index(recipe: CleaningRecipe) -> dict | None:
    """Every shipped eval set (eval_sets.yaml) indexed like the eval_set asset; None when decontamination is off."""
    from marin_assets.core.recipes import PACKAGE_RECIPES
    from marin_assets.data.curate.decontaminate import build_index
    from marin_assets.data.curate.eval_sets import load_eval_sets, read_items

    if not recipe.decontamination.enabled:
        return None
    registry = load_eval_sets(Path(PACKAGE_RECIPES) / "eval_sets.yaml")
    return {s.name: build_index((t for _, t in read_items(s)), recipe.decontamination.ngram) for s in registry.eval_sets}


def shipped_quality_model(recipe: CleaningRecipe) -> bytes | None:
    """A model trained like the quality_classifier asset on the shipped sample sources; None when quality is off."""
    from marin_assets.core.recipes import PACKAGE_RECIPES, load_recipe
    from marin_assets.data.curate import quality_classifier as qc
    from marin_assets.data.extract.reference_texts import source_texts
    from marin_assets.data.sources.source_registry import load_sources

    if not (recipe.quality.score or recipe.quality.filter):
        return None
    qrecipe = load_recipe(Path(PACKAGE_RECIPES) / qc.QUALITY_CLASSIFIER_RECIPE, qc.QualityClassifierRecipe)
    sources = load_sources(Path(PACKAGE_RECIPES) / "sources.yaml")
    docs = [(f"{name}/{i}", text, label)
            for names, label in ((qrecipe.positive_sources, qc.POSITIVE), (qrecipe.negative_sources, qc.NEGATIVE))
            for name in names for i, text in source_texts(sources.get(name), recipe.max_record_bytes)]  # fmt: skip
    return qc.train(qc.split_examples(docs, qrecipe), qrecipe)


def curation_for(recipe: CleaningRecipe, source: str, eval_index: dict | None, model: bytes | None) -> Curation:
    """curation_job.curation_for without Spark: the inputs as plain `.value` holders instead of broadcasts."""
    inputs = CurationInputs(Value(eval_index) if eval_index else None, Value(model) if model else None)
    return build_curation(recipe, source, inputs)
