"""real_corpus_throughput's per-stage part: the stages end every record as RecordCleaner does (a change in
the cleaner breaks this test, not the benchmark), cover what the shipped recipe switches on, and print."""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import cleaning_stages  # noqa: E402
import real_corpus_throughput  # noqa: E402

from marin_assets.core.recipes import PACKAGE_RECIPES  # noqa: E402
from marin_assets.data.curate import quality_classifier as qc
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe  # noqa: E402
from marin_assets.data.clean.cleaning_rows import RECORD_COLUMNS, RecordCleaner, record_tuple  # noqa: E402
from marin_assets.data.clean.filters.pipeline import FilterSettings  # noqa: E402
from marin_assets.data.formats.warc import warc_resource_record  # noqa: E402
from marin_assets.data.formats.readers import RawRecord, read_file  # noqa: E402
from marin_assets.data.sources.source_registry import SourceSpec  # noqa: E402
from marin_assets_tests.data.planted_corpus import prose  # noqa: E402

SAMPLE = Path(PACKAGE_RECIPES).parent / "sample_data"
# the first 12 handbook pages, and three the eval set copies passages of (21 and 27 also hold IP addresses)
HANDBOOK_PAGES = [*range(12), 21, 24, 27]


def _tiny_sources(tmp: Path) -> list[SourceSpec]:
    """15 handbook pages (HTML in a WARC) and the dirty web sample (spam, other languages, broken lines)."""
    handbook = SourceSpec(name="debian_handbook", uri=str(SAMPLE / "debian_handbook/debian_handbook.warc.gz"),
                          format="warc.gz", license="CC-BY-SA-3.0")  # fmt: skip
    pages = [r for r in read_file(handbook.uri, handbook) if isinstance(r, RawRecord)]
    pages = [pages[i] for i in HANDBOOK_PAGES]
    warc = tmp / "handbook.warc.gz"
    warc.write_bytes(b"".join(gzip.compress(warc_resource_record(p.url, p.content.encode(), date="2024-01-01T00:00:00Z"))
                              for p in pages))  # fmt: skip
    shutil.copy(SAMPLE / "dirty_web/dirty_web.jsonl.gz", tmp / "dirty_web.jsonl.gz")
    return [SourceSpec(name="debian_handbook", uri=str(warc), format="warc.gz", license="CC-BY-SA-3.0"),
            SourceSpec(name="dirty_web", uri=str(tmp / "dirty_web.jsonl.gz"), format="jsonl.gz", license="CC0-1.0")]


def _tiny_model() -> bytes:
    """A quality model trained like the asset on a small planted set (as test_quality_classifier trains it)."""
    recipe = qc.QualityClassifierRecipe(positive_sources=["good"], negative_sources=["bad"], chunk_words=40,
                                        epoch=20, bucket=200_000)  # fmt: skip
    spam = "BUY cheap pills now!!! click here best price free shipping limited offer win money fast casino bonus"
    docs = [(f"good-{i}", prose(i, sentences=10), qc.POSITIVE) for i in range(30)]
    docs += [(f"bad-{i}", " ".join([spam] * 6) + f" item {i}", qc.NEGATIVE) for i in range(30)]
    return qc.train(qc.split_examples(docs, recipe), recipe)


@pytest.mark.slow
def test_stages_end_every_record_as_the_cleaner_does_and_print(tmp_path, capsys):
    recipe = load_cleaning_recipe()
    eval_index, model = cleaning_stages.shipped_eval_index(recipe), _tiny_model()
    reasons, counts = set(), set()
    for spec in _tiny_sources(tmp_path):
        files = [spec.uri]
        curation = cleaning_stages.curation_for(recipe, spec.name, eval_index, model)
        docs, timings = cleaning_stages.run_stages(spec, files, recipe, curation)

        records = [record_tuple(r, "f") for r in read_file(spec.uri, spec, recipe.max_record_bytes)]
        batch = pa.RecordBatch.from_arrays([pa.array([r[i] for r in records]) for i in range(len(RECORD_COLUMNS))],
                                           names=RECORD_COLUMNS)  # fmt: skip
        rows = [row for out in RecordCleaner(recipe, spec.name, curation).clean_batches([batch])
                for row in out.to_pylist()]  # fmt: skip
        assert len(docs) == len(rows) == len(records)
        for doc, row in zip(docs, rows, strict=True):
            assert (doc.status, doc.reason) == (row["status"], row["reason"])
            if row["status"] == "kept":
                assert (doc.text, doc.exact_key, doc.bands, doc.quality_score) == (
                    row["text"], row["exact_key"], row["bands"], row["quality_score"])
            assert doc.step_counts == json.loads(row["step_counts"] or "{}")
        reasons |= {d.reason for d in docs}
        counts |= {key for d in docs for key in d.step_counts}

        names = [t.name for t in timings]
        on = [f"  filter {n} alone" for n in ["reflow", *recipe.filters.filter_options()] if getattr(recipe.filters, n) is not None]
        steps = ["curation decontamination", "curation pii", "curation quality"]  # all three on in the shipped recipe
        assert names == ["read", "extract", "normalize", "language id (whole document)", *on, "filters (recipe order)",
                         *steps, "dedup keys (exact + MinHash LSH)", "write (Arrow + Parquet zstd)"]  # fmt: skip
        by_name = {t.name: t for t in timings}
        read, extract = by_name["read"], by_name["extract"]  # extract sees the HTML records only
        assert by_name["normalize"].docs == read.docs - read.dropped - extract.dropped
        path = [t for t in timings if not t.alone and t.name not in ("read", "extract")]
        for before, after in zip(path, path[1:]):  # counts conserve from stage to stage
            assert after.docs == before.docs - before.dropped, (before, after)
        real_corpus_throughput.print_stages(spec.name[:5], timings)
    # the tiny corpus exercises quarantine, language, filters and decontamination
    assert {"language:not_in_allowlist", None} <= reasons
    assert {"decontamination:documents_cut", "pii:ip", "pii:email", "quality:scored"} <= counts, counts
    assert any(r and r.split(":")[0] in ("gopher_repetition", "gopher_quality", "c4", "fineweb") for r in reasons)
    out = capsys.readouterr().out
    assert "per-stage total (one core)" in out and "%" in out


@pytest.mark.slow
def test_whole_path_prints_each_round_and_the_median(spark, capsys):
    from marin_assets.data.sources.source_registry import load_sources

    spec = load_sources().get("dirty_web")
    recipe = load_cleaning_recipe()
    from contextlib import nullcontext

    sessions = []  # the benchmark starts a session a round; here the shared test session stands in

    def session():
        sessions.append(1)
        return nullcontext(spark)

    rate, conserved = real_corpus_throughput.whole_path(session, spec, recipe, "web", 100_000_000, 49, None, None,
                                                        repeat=3)  # fmt: skip
    assert len(sessions) == 3
    out = capsys.readouterr().out
    assert conserved and rate > 0
    assert [f"round {i}" in out for i in (1, 2, 3)] == [True] * 3 and "median of 3" in out
    # the verdict's figure is the median round's
    rounds = [float(line.split()[-3]) for line in out.splitlines() if "round" in line]  # MB/s
    assert len(rounds) == 3 and sorted(rounds)[1] == pytest.approx(rate, rel=0.01)
