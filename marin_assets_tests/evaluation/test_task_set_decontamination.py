"""Every registered task set is a decontamination set for cleaning by default (opt-out per set), its short
items matched whole, hits reported per item; through the committed task_set_decontamination folder."""

import json

import dagster as dg
import numpy as np
import pytest

from marin_assets.core.recipes import RecipeError, load_recipe
from marin_assets.core.storage import Storage, StorageError
from marin_assets.data.curate.decontaminate import ngram_hashes, ngram_hashes_by_length, normalized_words
from marin_assets.data.curate.decontamination_step import DecontaminationStep, item_key
from marin_assets.data.curate.item_hits import EvalIndexes
from marin_assets.data.curate.step_outcome import Value
from marin_assets.data.curate.task_set_indexes import read_task_set_indexes
from marin_assets.defs.evaluation.decontamination_assets import build_decontamination_asset
from marin_assets.evaluation.task_sets import TaskSetsRegistry, load_task_sets
from marin_assets.resources.storage_resource import StorageResource
from marin_assets_tests.data.planted_corpus import prose
from marin_assets_tests.evaluation.toy_task_set import toy_task_set

BLIMP_TASK = "blimp_sample_anaphor_number_agreement"
NEWS = "the closer he gets to Election Day, and the more the people shrug and think, Enough already, just vote."


def _committed(tmp_path, registry: TaskSetsRegistry) -> Storage:
    """task_set_decontamination materialized with Dagster over `registry`."""
    store = tmp_path / "store"
    result = dg.materialize([build_decontamination_asset(registry)], instance=dg.DagsterInstance.ephemeral(),
                            resources={"storage": StorageResource(root_uri=str(store))})
    assert result.success
    return Storage(str(store))


def _step(storage: Storage, min_words: int = 4, policy: str = "drop") -> DecontaminationStep:
    hashes, items, _ = read_task_set_indexes(storage, 13, min_words)
    return DecontaminationStep(Value(EvalIndexes(hashes, items)), 13, policy, 0.5)


def test_hashes_of_every_length_in_one_pass_equal_the_fixed_length_hashes():
    words = normalized_words(prose(1))
    by_length = ngram_hashes_by_length(words, [1, 4, 13, len(words), len(words) + 1])
    assert sorted(by_length) == [1, 4, 13, len(words)]  # a length longer than the text has no n-gram
    for n, hashes in by_length.items():
        assert np.array_equal(hashes, ngram_hashes(words, n))


def test_the_shipped_blimp_sample_is_a_decontamination_set_and_names_the_item_and_document(tmp_path):
    registry = load_task_sets()
    storage = _committed(tmp_path, registry)
    manifest = storage.read_json("task_set_decontamination", "manifest.json")
    assert manifest["task_sets"]["blimp_sample"]["items"] == 400  # the good sentence of every pair
    assert manifest["opted_out"] == ["blimp"]  # its files live outside the checkout
    step = _step(storage)
    good = "Susan revealed herself."  # 3 words: below min_item_words, listed as too short, never matched
    _, _, summary = read_task_set_indexes(storage, 13, 4)
    assert summary["blimp_sample"]["items_too_short"] > 0 and min(summary["blimp_sample"]["lengths"]) == 4
    assert step.apply(f"{prose(1)} {good} {prose(2)}").reject is None
    lines = [json.loads(line) for line in open(registry.get("blimp_sample").file_path("anaphor_number_agreement.jsonl"))]
    line = next(i for i, d in enumerate(lines, 1) if len(d["sentence_good"].split()) >= 6)
    item = lines[line - 1]["sentence_good"]
    leaked = step.apply(f"{prose(3)} Benchmark dump: {item.upper()} {prose(4)}")
    assert leaked.reject == "decontamination:blimp_sample"
    assert leaked.counts[item_key("blimp_sample", f"{BLIMP_TASK}/{line}")] == 1
    # the failing case: the item's words not all contiguous (one word dropped) is not a hit
    partial = " ".join(item.split()[:-2] + item.split()[-1:])
    assert step.apply(f"{prose(5)} {partial} {prose(6)}").counts == {}
    assert step.apply(prose(7)).counts == {}  # ordinary text: nothing


def test_min_item_words_keeps_a_three_word_item_from_matching_ordinary_english(tmp_path):
    """The rule's reason: BLiMP's "The people shrug." is in a news article of the extraction benchmark."""
    folder = tmp_path / "pairs"
    folder.mkdir()
    (folder / "word_order.jsonl").write_text('{"sentence_good": "The people shrug.", "sentence_bad": "People the shrug."'
                                             ', "linguistics_term": "order"}\n')
    storage = _committed(tmp_path, TaskSetsRegistry(task_sets=[toy_task_set(folder)]))
    assert _step(storage, min_words=4).apply(NEWS).counts == {}
    hit = _step(storage, min_words=3, policy="remove_spans").apply(NEWS)  # the failing case: a lower minimum
    assert hit.counts[item_key("toy_pairs", "toy_pairs_word_order/1")] == 1
    assert "people shrug" not in hit.text and hit.text.startswith("the closer he gets")


def test_opting_out_and_missing_fields_are_explicit(tmp_path):
    folder = tmp_path / "pairs"
    storage = _committed(tmp_path, TaskSetsRegistry(task_sets=[toy_task_set(folder, decontaminate=False)]))
    manifest = storage.read_json("task_set_decontamination", "manifest.json")
    assert manifest == {"task_sets": {}, "opted_out": ["toy_pairs"]}
    # the items need only the data files: a recipes folder copied elsewhere (no task YAML beside it) still works
    elsewhere = _committed(tmp_path / "copy", TaskSetsRegistry(task_sets=[toy_task_set(folder, task_yaml="/absent.yaml")]))
    assert elsewhere.read_json("task_set_decontamination", "manifest.json")["task_sets"]["toy_pairs"]["items"] == 48  # two files of 24 pairs
    (tmp_path / "task_sets.yaml").write_text(
        "task_sets:\n  - name: x\n    license: CC-BY-4.0\n    attribution: a\n    task_yaml: t.yaml\n    data_dir: d\n"
        "    files: {a.jsonl: abc}\n    provenance: {origin: o, version: '1'}\n")
    with pytest.raises(RecipeError, match=r"task_sets.yaml.*decontamination_fields"):
        load_recipe(tmp_path / "task_sets.yaml", TaskSetsRegistry)


def test_cleaning_refuses_to_run_without_the_task_sets_items(tmp_path):
    with pytest.raises(StorageError, match="task_set_decontamination .* is not materialized"):
        read_task_set_indexes(Storage(str(tmp_path / "empty")), 13, 4)
