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


def test_a_task_set_exported_as_an_eval_set_is_decontaminated_per_item_by_the_cleaning_step(tmp_path):
    """The task set -> eval-sets JSONL + registry entry -> the eval_set asset's index -> the cleaning job's
    decontamination step, which names the task item in a planted document (n = 5: BLiMP's sentences are short)."""
    from marin_assets.core import layout
    from marin_assets.core.storage import Storage
    from marin_assets.data.curate.curation_inputs import read_item_index
    from marin_assets.data.curate.decontamination_step import DecontaminationStep, item_key
    from marin_assets.data.curate.eval_index import build, read_index
    from marin_assets.data.curate.eval_sets import EvalSetSpec, file_checksum
    from marin_assets.data.curate.item_hits import EvalIndexes
    from marin_assets.data.curate.step_outcome import Value
    from marin_assets.evaluation.item_contamination import export_eval_set

    spec = load_task_sets().get("blimp_sample")
    entry = export_eval_set(spec, ["sentence_good", "sentence_bad"], str(tmp_path / "blimp_sample.jsonl"))
    eval_spec = EvalSetSpec.model_validate(entry)  # a valid registry entry, its checksum the file's
    assert file_checksum(eval_spec) == entry["provenance"]["checksum"] and eval_spec.license == "CC-BY-4.0"
    storage = Storage(str(tmp_path / "store"))
    with storage.atomic_dir(layout.EVAL, "blimp_sample") as staged:
        staged.write_json(build(eval_spec, 5, staged.path), "index.json")
    step = DecontaminationStep(Value(EvalIndexes({"blimp_sample": read_index(storage, "blimp_sample")},
                                                 {"blimp_sample": read_item_index(storage, "blimp_sample", 5)})),
                               5, "drop", 0.5)
    rows = eval_set_rows(spec, ["sentence_good", "sentence_bad"])
    planted = next(r for r in rows if len(r["sentence_good"].split()) >= 7)
    outcome = step.apply(f"Forum post. {planted['sentence_good']} Thanks for reading, see you next week.")
    assert outcome.reject == "decontamination:blimp_sample"
    assert outcome.counts[item_key("blimp_sample", planted["id"])] == 1
    assert step.apply("Forum post about gardening, with nothing from any benchmark in it.").counts == {}
