"""py3langid's model decoded once into a cache folder and memory-mapped: the same answers as py3langid."""

from __future__ import annotations

import numpy as np

from marin_assets.data import language_model
from marin_assets.data.language import _identifier
from marin_assets.data.language_batch import BatchIdentifier

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
