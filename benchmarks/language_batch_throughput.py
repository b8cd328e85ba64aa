"""Batched language identification against py3langid's classify, in process, on one core.

Two figures on the plain-text documents of the Debian benchmark corpus (benchmarks/make_bench_corpus.py):
- the language step alone: windows/s of BatchIdentifier.classify_many against py3langid's
  LanguageIdentifier.classify window by window, on the windows identify_language samples
  (normalised text, the shipped recipe's samples and sample_chars);
- RecordCleaner with the shipped cleaning recipe: docs/s of clean_many (one identification call per
  batch, what clean_batches runs) against the same cleaner identifying each document with py3langid
  (the code before the batch: classify per window, one document at a time).
Both sides must give the same answers (checked: same verdicts, same rows). The process is pinned to
one core; --repeat rounds per side, median, range and best.

    .venv/bin/python benchmarks/language_batch_throughput.py [--docs 2000] [--repeat 3]
        [--corpus /tmp/marin_bench_corpus-10000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import harness  # noqa: E402


def py3langid_document(text: str, samples: int, sample_chars: int) -> tuple[str, float]:
    """identify_language before the batch: py3langid's classify per window, one document at a time."""
    from marin_assets.data.clean.language_id import _identifier, document_language, sample_windows

    windows = sample_windows(text, samples, sample_chars)
    return document_language(windows, (_identifier().classify(window) for window in windows))


def load_records(corpus: Path, docs: int) -> list[dict]:
    from scale_data_path import write_recipes

    os.environ["MARIN_RECIPES_DIR"] = str(Path(tempfile.mkdtemp()) / "recipes")
    write_recipes(Path(os.environ["MARIN_RECIPES_DIR"]), corpus)
    from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
    from marin_assets.data.clean.cleaning_rows import RECORD_COLUMNS, record_tuple
    from marin_assets.data.formats.readers import list_source_files, read_file
    from marin_assets.data.sources.source_registry import load_sources

    recipe = load_cleaning_recipe()
    spec = next(s for s in load_sources().sources if s.name.endswith("text"))
    records = []
    for path in list_source_files(spec):
        for rec in read_file(path, spec, recipe.max_record_bytes):
            records.append(dict(zip(RECORD_COLUMNS, record_tuple(rec, "bench"), strict=True)))
            if len(records) >= docs:
                return records
    return records


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/marin_bench_corpus-10000"))
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core for both sides
    records = load_records(args.corpus, args.docs)

    from marin_assets.data.clean import cleaning_rows
    from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
    from marin_assets.data.clean.language_id import _batch_identifier, _identifier, sample_windows
    from marin_assets.data.clean.normalize import normalize_text

    recipe = load_cleaning_recipe()
    cfg = recipe.language
    texts = [normalize_text(r["content"] or "", recipe.normalize.form) for r in records if r["kind"] == "record"]
    windows = [w for t in texts for w in sample_windows(t, cfg.samples, cfg.sample_chars)]
    print(f"{len(records)} documents, {sum(map(len, texts)) / 1e6:.1f} M characters, {len(windows)} windows")
    _batch_identifier().classify_many(["warm up: load the model and build the tables before timing"])

    batched, py3 = harness.Side("batched", cores=1), harness.Side("py3langid", cores=1)
    for _ in range(args.repeat):
        batched.time(lambda: _batch_identifier().classify_many(windows), units=len(windows))
        py3.time(lambda: [_identifier().classify(w) for w in windows], units=len(windows))
    assert batched.last == py3.last, "the batch and py3langid disagree on a window"
    harness.report("language step alone (identical verdicts)", batched, py3, unit="windows/s")

    cleaner = cleaning_rows.RecordCleaner(recipe)
    batched_identify = cleaning_rows.identify_languages
    one_by_one = lambda ts, *a: [py3langid_document(t, *a) for t in ts]  # noqa: E731
    ours, before = harness.Side("clean_many", cores=1), harness.Side("py3langid/doc", cores=1)
    for _ in range(args.repeat):
        cleaning_rows.identify_languages = batched_identify
        ours.time(lambda: cleaner.clean_many([dict(r) for r in records]), units=len(records))
        cleaning_rows.identify_languages = one_by_one
        before.time(lambda: cleaner.clean_many([dict(r) for r in records]), units=len(records))
    cleaning_rows.identify_languages = batched_identify
    assert json.dumps(ours.last) == json.dumps(before.last), "rows differ"
    harness.report("RecordCleaner, shipped recipe (identical rows)", ours, before, unit="docs/s")
    for side in (batched, py3, ours, before):
        print(f"best of {len(side.rates)}: {side.name} {max(side.rates):,.0f}/s")
    print(f"best-of ratios: language {max(batched.rates) / max(py3.rates):.2f}x, "
          f"cleaning {max(ours.rates) / max(before.rates):.2f}x")


if __name__ == "__main__":
    main()
