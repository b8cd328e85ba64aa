"""A task set as a decontamination set names the eval items a document contains (and which document)."""

from marin_assets.evaluation.item_contamination import (build_item_index, eval_set_rows, hits_by_item,
                                                        item_ids_and_texts, item_hits)
from marin_assets.evaluation.task_sets import load_task_sets


def test_documents_containing_blimp_sentences_are_reported_per_item():
    spec = load_task_sets().get("blimp_sample")
    index = build_item_index(item_ids_and_texts(spec, ["sentence_good", "sentence_bad"]), ngram=13)
    rows = eval_set_rows(spec, ["sentence_good", "sentence_bad"])
    assert len(rows) == 400 and rows[0]["id"] == "blimp_sample_anaphor_number_agreement/1"
    good = rows[0]["sentence_good"]  # "Susan revealed herself."
    leaked = f"A web page that quotes the benchmark. {good.upper()} And goes on about other things."
    clean = "A web page about something else entirely, with no benchmark sentence in it at all."
    hits = item_hits("doc-7", leaked, index)
    assert {"task": "blimp_sample_anaphor_number_agreement", "item": "1", "document": "doc-7", "ngrams": 1} in hits
    assert item_hits("doc-8", clean, index) == []  # the failing case: no shared n-gram, no hit
    found = hits_by_item([("doc-7", leaked), ("doc-8", clean), ("doc-9", good)], index)
    assert found["blimp_sample_anaphor_number_agreement/1"] == ["doc-7", "doc-9"]
    assert all("doc-8" not in docs for docs in found.values())
