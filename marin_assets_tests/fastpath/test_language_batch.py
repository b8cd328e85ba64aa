"""Batched language identification gives py3langid's answers: per window, per document, per cleaned row."""

from __future__ import annotations

import json
import random
from functools import cache

import pandas as pd
import pyarrow as pa
import pytest

from marin_assets.data.clean import cleaning_rows
from marin_assets.fastpath.langid import language_batch
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.clean.cleaning_rows import RECORD_COLUMNS, ROW_COLUMNS, RecordCleaner, record_tuple, row_arrow_schema
from marin_assets.data.clean.language_id import (
    _identifier, document_language, drop_foreign_paragraphs, identify_language, identify_languages, sample_windows,
)
from marin_assets.fastpath.langid.language_batch import BatchIdentifier
from marin_assets.data.formats.readers import list_source_files, read_file
from marin_assets.data.sources.source_registry import load_sources

SNIPPETS = [
    "The harbour opens at six in the morning and the first boats leave soon after. ",
    "Der Hafen öffnet um sechs Uhr morgens, und die ersten Boote fahren kurz danach. ",
    "Le port ouvre à six heures du matin et les premiers bateaux partent peu après. ",
    "Порт открывается в шесть утра, и первые лодки уходят вскоре после этого. ",
    "港口早上六点开放，第一批船只随后不久出发。", "港は朝六時に開き、最初の船はすぐに出発します。",
    "يفتح الميناء في السادسة صباحا وتغادر القوارب الأولى بعد ذلك بقليل. ",
    "Το λιμάνι ανοίγει στις έξι το πρωί. ", "बंदरगाह सुबह छह बजे खुलता है। ", "🚢⚓🌊 ", "12:30 -- $ 4,50 € ",
    "Cafe\u0301 noe\u0308l ", "\t\n\n", "<div class='menu'>Home | About</div> ",
]  # fmt: skip
EDGE_CASES = ["", " ", "a", "é", "HELLO WORLD, THIS IS SHOUTED", "ÄÖÜ STRASSE", "\x00\x01\x02", "\ud800 lone",
              "x" * 3, "日本", "🙂" * 700, "ab" * 6000]  # fmt: skip


def _synthetic(count: int, seed: int = 0) -> list[str]:
    """Mixed-language strings, from empty to ~12k characters."""
    rng = random.Random(seed)
    return ["".join(rng.choice(SNIPPETS) for _ in range(rng.choice([0, 1, 3, 10, 40, 150]))) for _ in range(count)]


@cache
def _sample_texts() -> tuple[str, ...]:
    """The shipped sample data's raw contents (HTML and plain text, ~230 documents)."""
    return tuple(rec.content for spec in load_sources().sources for f in list_source_files(spec)
                 for rec in read_file(f, spec) if getattr(rec, "content", None) is not None)  # fmt: skip


def _assert_same_as_py3langid(texts: list[str]) -> None:
    got = BatchIdentifier(_identifier()).classify_many(texts)
    for text, (lang, prob) in zip(texts, got, strict=True):
        ref_lang, ref_prob = _identifier().classify(text)
        assert lang == ref_lang and abs(prob - ref_prob) <= 1e-9, text[:80]


def test_batch_equals_py3langid_on_sample_windows(monkeypatch):
    monkeypatch.setattr(language_batch, "CHUNK", 97)  # several chunks, the last one short
    windows = [w for text in _sample_texts()[::3] for w in sample_windows(text, 5, 500)]
    assert len(windows) > 300
    _assert_same_as_py3langid(windows)


def test_batch_equals_py3langid_on_multilingual_short_empty_and_long_strings(monkeypatch):
    monkeypatch.setattr(language_batch, "CHUNK", 16)
    monkeypatch.setattr(language_batch, "CELLS", 40_000)  # the longest walk alone, in py3langid's loop
    texts = EDGE_CASES + _synthetic(60)
    assert max(map(len, texts)) > 5000 and "" in texts
    _assert_same_as_py3langid(texts)
    _assert_same_as_py3langid([""] * 20)  # a walk with no byte at all
    assert BatchIdentifier(_identifier()).classify_many([]) == []


def test_a_window_stops_at_its_last_byte(monkeypatch):
    """With a model where the padding byte (0) would emit, a window that ended must not walk on."""
    from py3langid.langid import LanguageIdentifier

    model = _identifier()
    reached_on_0 = {model.tk_nextmove[(row << 8) + 0] for row in model.tk_row}
    output = [0 if state in reached_on_0 else f for state, f in enumerate(model.tk_output)]
    emitting = LanguageIdentifier(model.nb_ptc, model.nb_pc, model.nb_classes, model.tk_nextmove, output,
                                  norm_probs=True, tk_row=model.tk_row)  # fmt: skip
    monkeypatch.setattr(language_batch, "MIN_LOCKSTEP", 1)
    texts = [SNIPPETS[i % 4] * (1 + i % 5) for i in range(20)]
    assert BatchIdentifier(emitting).classify_many(texts) == [emitting.classify(t) for t in texts]


def test_batch_refuses_a_model_it_cannot_reproduce():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    with pytest.raises(ValueError, match="norm_probs"):
        BatchIdentifier(LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False))


def _py3langid_document(text: str, samples: int = 5, sample_chars: int = 500) -> tuple[str, float]:
    """identify_language as it was: py3langid's classify on each window, one document at a time."""
    windows = sample_windows(text, samples, sample_chars)
    return document_language(windows, (_identifier().classify(window) for window in windows))


def test_identify_languages_equals_one_document_at_a_time_with_py3langid():
    texts = list(_sample_texts()) + _synthetic(80, seed=1) + EDGE_CASES
    assert len(texts) > 300
    expected = [_py3langid_document(text) for text in texts]
    assert identify_languages(texts) == expected
    assert [identify_language(text) for text in texts[::25]] == expected[::25]
    assert identify_languages(texts[:40], 3, 200) == [_py3langid_document(t, 3, 200) for t in texts[:40]]
    assert identify_languages([]) == []


def _records(source: str) -> list[dict]:
    spec = load_sources().get(source)
    return [dict(zip(RECORD_COLUMNS, record_tuple(rec, f.rsplit("/", 1)[-1]), strict=True))
            for f in list_source_files(spec) for rec in read_file(f, spec)]


def test_clean_batches_rows_equal_rows_cleaned_one_by_one_with_py3langid(monkeypatch):
    recipe = load_cleaning_recipe()
    recipe = recipe.model_copy(update={"language": recipe.language.model_copy(update={"allowlist": ["en", "de"]})})
    synthetic = [{**dict.fromkeys(RECORD_COLUMNS), "kind": "record", "id": f"s{i}", "content": text,
                  "content_type": "text", "metadata": "{}", "raw_length": len(text), "file": "s", "offset": i}
                 for i, text in enumerate(_synthetic(60, seed=2) + [t for t in EDGE_CASES if t.isprintable()])]  # fmt: skip
    records = _records("dirty_web") + synthetic + _records("debian_licenses")
    batched = pa.Table.from_batches(list(RecordCleaner(recipe).clean_batches(
        [pa.RecordBatch.from_pylist(part) for part in (records[:40], records[40:])]))).to_pandas()  # fmt: skip
    monkeypatch.setattr(cleaning_rows, "identify_languages", lambda texts, *a: [_py3langid_document(t, *a[:2]) for t in texts])  # a[2]: the identifier switch
    reference = [RecordCleaner(recipe).clean(rec) for rec in records]
    expected = pa.Table.from_pylist(reference, schema=row_arrow_schema()).to_pandas()
    others = [c for c in ROW_COLUMNS if c != "bands"]
    pd.testing.assert_frame_equal(batched[others], expected[others])
    languages = [json.loads(m).get("language") for m in batched["metadata"] if m]
    assert {"en"} < set(languages) and (batched["reason"] == "language:not_in_allowlist").any()


def test_foreign_paragraphs_dropped_in_one_batch_as_py3langid_would():
    lines = [t for t in _synthetic(60, seed=3) if "\n" not in t]
    expected = [line for line in lines
                if not (len(line.strip()) >= 100 and (v := _identifier().classify(line))[0] != "en" and v[1] >= 0.65)]
    dropped = drop_foreign_paragraphs("\n".join(lines), ["en"], 100, 0.65)
    assert dropped.dropped == len(lines) - len(expected) > 0
    assert dropped.text == "\n".join(expected).strip()


def test_repeated_windows_are_classified_once_with_the_same_verdicts(monkeypatch):
    """The memo: a window seen before (in this call or an earlier one) is not walked again; when the
    memo is full it starts afresh, and every answer is still py3langid's."""
    monkeypatch.setattr(language_batch, "CHUNK", 16)
    texts = _synthetic(40, seed=3)
    repeated = texts + texts[::2] + ["", ""]
    batch = BatchIdentifier(_identifier())
    walked = []
    real_chunk = batch._classify_chunk
    monkeypatch.setattr(batch, "_classify_chunk", lambda encoded, lengths: walked.extend(encoded) or real_chunk(
        encoded, lengths))  # fmt: skip
    got = batch.classify_many(repeated)
    assert len(walked) == len(set(walked)) and set(walked) <= {language_batch.encode(t) for t in texts}
    assert got == [_identifier().classify(t) for t in repeated]
    walked.clear()
    assert batch.classify_many(texts[:5]) == got[:5] and not walked  # all remembered
    monkeypatch.setattr(language_batch, "MEMO_BYTES", max(map(len, map(language_batch.encode, texts))) + 1)
    small = BatchIdentifier(_identifier())
    assert small.classify_many(repeated) == got  # the memo starts afresh over and over
    assert 0 < small.memo_bytes <= language_batch.MEMO_BYTES and len(small.memo) < len(set(texts))
