"""Decontamination names the eval items a document contains (which item, which document), from the eval
set's committed items, through the cleaning stats into the cleaning report and the asset's metadata."""

import json

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.data.clean.cleaning_recipe import DedupSettings
from marin_assets.data.curate.decontaminate import build_index
from marin_assets.data.curate.decontamination_step import DecontaminationStep, hits_per_item, item_key
from marin_assets.data.curate.curation_inputs import read_item_index
from marin_assets.data.curate.eval_index import build, read_index
from marin_assets.data.curate.eval_sets import EvalSetSpec
from marin_assets.data.curate.item_hits import EvalIndexes
from marin_assets.data.report.data_report import build_report, markdown
from marin_assets.data.sources.source_registry import Provenance
from marin_assets.data.curate.step_outcome import Value
from marin_assets_tests.data.planted_corpus import prose
from marin_assets_tests.data.test_report import STATS

ITEMS = {
    "q1": "Sea otters hold hands while they sleep so that the current does not carry them away from their group.",
    "q2": "The committee postponed the vote on the harbour bridge until the engineers had finished their survey.",
    "q3": "Too short to index at thirteen words.",
}


def _committed_eval_set(tmp_path) -> Storage:
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(json.dumps({"id": k, "question": v}) + "\n" for k, v in ITEMS.items()))
    spec = EvalSetSpec(name="qa", uri=str(data), text_fields=["question"], license="CC-BY-4.0",
                       provenance=Provenance(origin="planted", version="1"))
    storage = Storage(str(tmp_path / "store"))
    with storage.atomic_dir(layout.EVAL, "qa") as staged:
        staged.write_json(build(spec, 13, staged.path), "index.json")
    return storage


def test_a_planted_document_is_reported_per_item_from_the_committed_eval_set(tmp_path):
    storage = _committed_eval_set(tmp_path)
    indexes = EvalIndexes({"qa": read_index(storage, "qa")}, {"qa": read_item_index(storage, "qa", 13)})
    step = DecontaminationStep(Value(indexes), 13, "drop", 0.5)
    leaked = step.apply(f"{prose(1)} {ITEMS['q2'].upper()} {prose(2)}")
    assert leaked.reject == "decontamination:qa"
    assert leaked.counts[item_key("qa", "q2")] == 1
    assert not any(":item[" in k and "q2" not in k for k in leaked.counts)  # only the item it holds
    clean = step.apply(f"{prose(3)} {ITEMS['q3']} {prose(4)}")  # the failing case: a short item is not indexed
    assert clean.reject is None and clean.counts == {}
    both = step.apply(f"{ITEMS['q1']} and then {ITEMS['q2']}")
    assert {k for k in both.counts if ":item[" in k} == {item_key("qa", "q1"), item_key("qa", "q2")}


def test_without_items_the_step_counts_per_set_only_as_before():
    step = DecontaminationStep(Value({"qa": build_index([ITEMS["q1"]], 13)}), 13, "drop", 0.5)
    assert step.apply(ITEMS["q1"]).counts == {"decontamination[qa]:documents": 1, "decontamination[qa]:ngrams": 7}


def test_the_cleaning_report_lists_hits_per_item_with_the_documents():
    counts = {"decontamination[qa]:documents": 3, "decontamination[qa]:ngrams": 40,
              item_key("qa", "q2"): 2, item_key("qa", "q1"): 1, "pii:email": 4}
    examples = {item_key("qa", "q2"): ["doc-3", "doc-9"], item_key("qa", "q1"): ["doc-4"]}
    assert hits_per_item(counts, examples) == [
        {"eval_set": "qa", "item": "q2", "documents": 2, "example_documents": ["doc-3", "doc-9"]},
        {"eval_set": "qa", "item": "q1", "documents": 1, "example_documents": ["doc-4"]}]
    assert hits_per_item({"decontamination[qa]:documents": 3}, {}) == []
    report = build_report("demo", {**STATS, "curation_counts": counts, "curation_examples": examples}, [], [],
                          DedupSettings())
    assert report["decontamination"] == {"decontamination[qa]:documents": 3, "decontamination[qa]:ngrams": 40}
    assert "| qa | q2 | 2 | `doc-3`, `doc-9` |" in markdown(report, {})
