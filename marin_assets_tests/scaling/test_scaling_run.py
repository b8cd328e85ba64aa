"""One real suite run: MaxText on CPU through the training stage's launcher, via Dagster."""

import json
import random
import shutil

import dagster as dg
import pytest

from marin_assets.core.recipes import PACKAGE_RECIPES
from marin_assets.defs.scaling.definitions import build_defs
from marin_assets.scaling.suite import suite_runs
from marin_assets_tests.scaling.suite_fixture import fixture_recipe
from marin_assets_tests.train.eval_set_fixture import write_eval_set
from marin_assets_tests.train.mixture_fixture import _document, build_mixture
from marin_assets_tests.local_resources import local_resources

pytestmark = pytest.mark.slow


def test_one_partition_trains_and_commits_its_result(tmp_path, monkeypatch):
    info = build_mixture(tmp_path, train_docs=1200, validation_sources=("wiki", "code"))
    # The registered eval set, materialized with text of the fixture's grammar (its tokenizer knows those words).
    rng = random.Random(7)
    held_texts = [_document(rng) for _ in range(12)]
    write_eval_set(tmp_path, "handbook_passages", held_texts)
    recipe = fixture_recipe(budgets=[{"flops": 1e10, "sizes": ["d16l1", "d24l1", "d32l1"]}], heldout=None)
    run = next(r for r in suite_runs(recipe) if r.size == "d32l1")
    assert 20 <= run.steps <= 60 and run.D < info.train_tokens
    defs = build_defs(recipe)
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
    result = dg.materialize([*defs.assets, mixture], selection=["scaling_run"], partition_key=run.key,
                            resources=local_resources(str(tmp_path)))
    assert result.success
    saved = json.loads((tmp_path / "scaling" / recipe.name / "runs" / run.key / "result.json").read_text())
    assert saved["status"] == "succeeded" and saved["N"] == run.N and saved["D"] == run.D
    assert saved["flops_model"].startswith("6ND") and 0 < saved["final_eval_loss"] < 6.0
    assert saved["num_params_total"] > run.N  # total also counts the input embedding table
    # The fixture mixture predates available_train_tokens: the repetition fields say "unknown", not a guess.
    assert saved["unique_tokens"] is None and saved["epochs"] is None
    text = saved["validation_text"]["all"]
    assert text["documents"] == 40 and text["bytes"] > text["tokens"] > 0
    assert saved["metrics"]["bpb"] == pytest.approx(
        saved["final_eval_loss"] * text["tokens"] / (0.6931471805599453 * text["bytes"]))
    meta = result.asset_materializations_for_node("scaling_run")[0].metadata
    assert meta["status"].value == "succeeded" and meta["loss_curve_plot"].value.startswith("![")
    assert meta["bpb"].value == pytest.approx(saved["metrics"]["bpb"])
    # Per-domain evaluation of the final checkpoint (MaxText's eval step on each source's rows).
    assert saved["domain_eval_error"] is None and saved["domain_eval_s"] > 0
    print(f"per-domain eval: {saved['domain_eval_s']:.1f} s of a {saved['wall_s']:.1f} s run")
    metrics, text = saved["metrics"], saved["validation_text"]
    assert text["wiki"]["documents"] == text["code"]["documents"] == 20
    weighted = sum(metrics[f"loss/{s}"] * text[s]["tokens"] for s in ("wiki", "code")) / text["all"]["tokens"]
    assert weighted == pytest.approx(saved["final_eval_loss"], rel=0.02)  # the split's loss, up to packing
    for source in ("wiki", "code"):
        assert metrics[f"bpb/{source}"] == pytest.approx(
            metrics[f"loss/{source}"] * text[source]["tokens"] / (0.6931471805599453 * text[source]["bytes"]))
    # The registered eval set, evaluated on the final checkpoint; bpb from its raw text's bytes.
    held = next(r for r in saved["domains"] if r["domain"] == "handbook_passages")
    assert held["kind"] == "eval_set" and held["documents"] == 12 and saved["eval_sets_missing"] == {}
    assert held["bytes"] == sum(len(t.encode("utf-8")) for t in held_texts) and 0 < held["loss"] < 6.0
    assert metrics["bpb/handbook_passages"] == pytest.approx(
        held["loss"] * held["tokens"] / (0.6931471805599453 * held["bytes"]))
    assert meta["eval_sets_missing"].value == "none"
    table = {r.data["domain"]: r.data for r in meta["domains"].records}
    assert table["handbook_passages"]["kind"] == "eval_set"
    assert table["wiki"]["kind"] == "source" and table["wiki"]["bpb"] == pytest.approx(metrics["bpb/wiki"], rel=1e-3)
    assert meta["domain_bpb_plot"].value.startswith("![bpb by domain](data:image/png;base64,")
    assert len(meta["domain_bpb_plot (preview)"].value) < 1000  # drawn inline in the UI

    export_the_chosen_run(tmp_path, monkeypatch, recipe, run)


def export_the_chosen_run(tmp_path, monkeypatch, recipe, run):
    """recipes/hf_export.yaml's scaling_runs names this run: scaling_hf_export writes it in the HF layout
    and its blocking logits check passes; a key that is not a run of the suite is refused, naming the field."""
    recipes = tmp_path / "recipes"
    shutil.copytree(PACKAGE_RECIPES, recipes)
    (tmp_path / "sample_data").symlink_to(PACKAGE_RECIPES.parent / "sample_data")
    monkeypatch.setenv("MARIN_RECIPES_DIR", str(recipes))
    monkeypatch.setenv("MARIN_DATA_ROOTS", str(PACKAGE_RECIPES.parent / "sample_data"))
    text = (recipes / "hf_export.yaml").read_text().replace("scaling_runs: {}", "scaling_runs: {%s: [C9e99__d1l1]}"
                                                                 % recipe.name)
    (recipes / "hf_export.yaml").write_text(text)
    with pytest.raises(ValueError, match=r"hf_export.yaml: scaling_runs.fixture_suite: \['C9e99__d1l1'\] are not runs"):
        build_defs(recipe)
    (recipes / "hf_export.yaml").write_text(text.replace("C9e99__d1l1", run.key))
    defs = build_defs(recipe)
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
    result = dg.materialize([*defs.assets, mixture], selection=dg.AssetSelection.assets("scaling_hf_export"),
                            partition_key=run.key, resources=local_resources(str(tmp_path)))
    assert result.success
    [check] = result.get_asset_check_evaluations()
    print(f"scaling_hf_logits_match: {check.description}")
    assert check.passed and check.check_name == "scaling_hf_logits_match"
    folder = tmp_path / "training" / f"{recipe.name}-{run.key}" / "hf"
    saved = json.loads((tmp_path / "scaling" / recipe.name / "runs" / run.key / "result.json").read_text())
    manifest = json.loads((folder / "_provenance.json").read_text())
    assert manifest["export"]["checkpoint_hash"] == saved["checkpoint_hash"]
    assert json.loads((folder / "config.json").read_text())["architectures"] == ["LlamaForCausalLM"]
