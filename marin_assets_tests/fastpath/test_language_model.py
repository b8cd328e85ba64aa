"""py3langid's model decoded once into a cache folder and memory-mapped: the same answers as py3langid."""

from __future__ import annotations

import numpy as np

from marin_assets.fastpath.langid import language_model
from marin_assets.data.clean.language_id import _identifier
from marin_assets.fastpath.langid.language_batch import BatchIdentifier

TEXTS = ["The harbour opens at six in the morning and the first boats leave soon after.",
         "Der Hafen öffnet um sechs Uhr morgens, und die ersten Boote fahren kurz danach.",
         "Порт открывается в шесть утра.", "港口早上六点开放。", "", "12:30 -- $ 4,50", "x" * 3000]  # fmt: skip


def test_the_mapped_model_answers_as_py3langid_and_is_written_once(tmp_path, monkeypatch):
    monkeypatch.setenv(language_model.CACHE_ENV, str(tmp_path))
    mapped = language_model.mapped_identifier()
    folders = list(tmp_path.iterdir())
    assert len(folders) == 1 and (folders[0] / "classes.json").is_file()
    written = {f.name: f.stat().st_mtime_ns for f in folders[0].iterdir()}
    again = language_model.mapped_identifier()
    assert {f.name: f.stat().st_mtime_ns for f in folders[0].iterdir()} == written  # read, not decoded again
    reference = _identifier()
    assert [mapped.classify(t) for t in TEXTS] == [reference.classify(t) for t in TEXTS]
    assert BatchIdentifier(again).classify_many(TEXTS) == [reference.classify(t) for t in TEXTS]
    # the big arrays are views of mapped files, not copies in the process's memory
    assert not mapped.nb_ptc.flags.owndata and isinstance(mapped.nb_ptc.base, np.memmap)
    assert isinstance(np.frombuffer(mapped.tk_nextmove, np.uint32).base, memoryview)


def test_an_unwritable_cache_folder_falls_back_to_py3langid_loading(tmp_path, monkeypatch):
    blocked = tmp_path / "a_file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(language_model.CACHE_ENV, str(blocked / "langid"))
    identifier = language_model.mapped_identifier()
    assert identifier.nb_ptc.flags.owndata or not isinstance(identifier.nb_ptc.base, np.memmap)
    assert [identifier.classify(t) for t in TEXTS] == [_identifier().classify(t) for t in TEXTS]


def test_the_float32_table_is_converted_once_mapped_and_exact(tmp_path, monkeypatch):
    monkeypatch.setenv(language_model.CACHE_ENV, str(tmp_path))
    table = language_model.float32_table()
    path = next(tmp_path.iterdir()) / "ptc_float32.npy"
    written = path.stat().st_mtime_ns
    again = language_model.float32_table()
    assert path.stat().st_mtime_ns == written and isinstance(again.base, np.memmap)
    assert not [f for f in path.parent.iterdir() if f.name.endswith(".tmp")]  # no half-written file left
    reference = _identifier()
    assert table.dtype == np.float32 and np.array_equal(table, reference.nb_ptc.astype(np.float32))
    mapped = BatchIdentifier(language_model.mapped_identifier(), again).classify_many(TEXTS)
    assert mapped == [reference.classify(t) for t in TEXTS]


def test_no_float32_table_when_the_cache_folder_cannot_be_written(tmp_path, monkeypatch):
    blocked = tmp_path / "a_file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(language_model.CACHE_ENV, str(blocked / "langid"))
    assert language_model.float32_table() is None
    batch = BatchIdentifier(_identifier(), None)  # converts in memory
    assert batch.ptc32.dtype == np.float32 and batch.classify_many(TEXTS) == [_identifier().classify(t) for t in TEXTS]
