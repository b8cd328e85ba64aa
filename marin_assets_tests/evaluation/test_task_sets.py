"""Task sets: registered BLiMP sets verify, a missing or changed file is refused by name, the license goes
through the compliance decision, and the summary's metrics are computed as defined."""

import math
import shutil

import pytest

from marin_assets.core.recipes import RecipeError, load_recipe
from marin_assets.evaluation.harness_run import summarize, write_task_yamls
from marin_assets.evaluation.task_sets import (TaskSetsRegistry, load_task_sets, task_categories, task_set_verdict,
                                               verified_files)
from marin_assets_tests.evaluation.toy_task_set import toy_task_set


def test_registered_blimp_sets_verify_and_are_cleared():
    registry = load_task_sets()
    sample, full = registry.get("blimp_sample"), registry.get("blimp")
    assert len(verified_files(sample)) == 4
    paths = verified_files(full)  # the full set, read from ../shared/datasets/blimp
    assert len(paths) == 67 and full.task_name("adjunct_island.jsonl") == "blimp_adjunct_island"
    # the files name 13 linguistics_term values (the published summary groups s-selection elsewhere: 12 rows)
    assert len(set(task_categories(full, paths).values())) == 13
    assert task_set_verdict(sample).cleared and task_set_verdict(full).cleared
    assert full.baselines["GPT-2 1.5B"] == 0.830


def test_a_missing_or_changed_data_file_is_refused_naming_it(tmp_path):
    spec = toy_task_set(tmp_path / "pairs")
    assert sorted(verified_files(spec)) == ["word_order.jsonl", "word_order_b.jsonl"]
    changed = tmp_path / "pairs" / "word_order_b.jsonl"
    changed.write_text(changed.read_text().replace("the", "a", 1))
    with pytest.raises(ValueError, match=f"data file {changed} has sha256 .*, task_sets.yaml registers"):
        verified_files(spec)
    changed.unlink()
    with pytest.raises(FileNotFoundError, match=f"data file {changed} does not exist"):
        verified_files(spec)


def test_the_license_and_checksum_go_through_the_compliance_decision(tmp_path):
    assert task_set_verdict(toy_task_set(tmp_path / "pairs")).cleared
    verdict = task_set_verdict(toy_task_set(tmp_path / "pairs", license="LicenseRef-proprietary"))
    assert not verdict.cleared and [p.code for p in verdict.problems] == ["license_not_allowed"]
    bad = toy_task_set(tmp_path / "pairs").provenance.model_copy(update={"checksum": "0" * 64})
    assert [p.code for p in task_set_verdict(toy_task_set(tmp_path / "pairs", provenance=bad)).problems] == [
        "checksum_mismatch"]


def test_an_unknown_field_in_the_registry_is_refused_naming_it(tmp_path):
    (tmp_path / "task_sets.yaml").write_text("task_sets:\n  - name: x\n    licence: CC-BY-4.0\n")
    with pytest.raises(RecipeError, match="licence"):
        load_recipe(tmp_path / "task_sets.yaml", TaskSetsRegistry)


def test_generated_task_yamls_include_the_template_and_point_at_the_verified_file(tmp_path):
    spec = toy_task_set(tmp_path / "pairs")
    names = write_task_yamls(spec, verified_files(spec), str(tmp_path / "yamls"))
    assert names == ["toy_pairs_word_order", "toy_pairs_word_order_b"]
    text = (tmp_path / "yamls" / "toy_pairs_word_order.yaml").read_text()
    assert spec.task_yaml in text and str(tmp_path / "pairs" / "word_order.jsonl") in text


def _sample(lls, gold=0, acc=None, choices=(" ab", " abcd")):
    best = max(range(len(lls)), key=lambda i: lls[i])
    return {"filtered_resps": [(ll, False) for ll in lls], "target": gold,
            "arguments": [("", c) for c in choices], "acc": float(best == gold) if acc is None else acc}


def test_summary_metrics_by_hand(tmp_path):
    spec = toy_task_set(tmp_path / "pairs")
    samples = {"toy_pairs_word_order": [_sample([-1.0, -2.0]), _sample([-3.0, -1.0])],
               "toy_pairs_word_order_b": [_sample([-2.0, -2.0])]}  # a tie: the harness's argmax takes choice 0
    results = {"toy_pairs_word_order": {"acc,none": 0.5}, "toy_pairs_word_order_b": {"acc,none": 1.0}}
    summary = summarize(spec, results, samples)
    first = summary["tasks"]["toy_pairs_word_order"]
    assert first["acc"] == 0.5 and first["random"] == 0.5 and first["centered_acc"] == 0.0 and first["ties"] == 0
    p = 1 / (1 + math.exp(-1))  # softmax of (-1, -2) at 0; (-3, -1) at 0 is 1 - 1/(1 + e^-2)
    assert first["correct_prob_norm"] == pytest.approx((p + 1 / (1 + math.exp(2))) / 2)
    assert first["correct_logprob"] == -2.0
    assert first["bpb"] == pytest.approx(4.0 / (math.log(2) * 6))  # 1 + 3 nats over " ab" twice (3 bytes each)
    assert summary["tasks"]["toy_pairs_word_order_b"]["ties"] == 1
    assert summary["overall"]["acc"] == 0.75 and summary["overall"]["items"] == 3  # mean over tasks
    assert sorted(summary["categories"]) == ["order", "order_b"]
    results["toy_pairs_word_order"]["acc,none"] = 1.0  # the failing case: harness and samples disagree
    with pytest.raises(ValueError, match="the harness's acc 1.0 differs from its samples' 0.5"):
        summarize(spec, results, samples)
