"""The weights registry: each entry is cleared by the sources' compliance decision, refused before launch otherwise."""

import json
import shutil

import numpy as np
import pytest

from marin_assets.core import layout
from marin_assets.core.recipes import PACKAGE_RECIPES, RecipeError, load_recipe
from marin_assets.core.storage import Storage
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.train import weights as weights_module
from marin_assets.train.maxtext_config import RunPaths, maxtext_keys
from marin_assets.train.run_folder import run_paths
from marin_assets.train.runs import TrainingRuns
from marin_assets.train.weights import (WeightsNotClearedError, WeightsRegistry, assert_weights_cleared,
                                        checkpoint_inventory, load_weights)
from marin_assets_tests.train.mixture_fixture import LINEAGE_SOURCE

PROVENANCE = {"origin": "a test", "version": "1"}


@pytest.fixture
def recipes(tmp_path, monkeypatch):
    """A copy of the package recipes with a weights.yaml of the test's own; load_weights reads it."""
    folder = tmp_path / "recipes"
    shutil.copytree(PACKAGE_RECIPES, folder)
    monkeypatch.setenv("MARIN_RECIPES_DIR", str(folder))
    monkeypatch.setenv("MARIN_DATA_ROOTS", str(PACKAGE_RECIPES.parent / "sample_data"))
    (tmp_path / "sample_data").symlink_to(PACKAGE_RECIPES.parent / "sample_data")  # sources.yaml's ../sample_data
    load_weights.cache_clear()
    load_sources.cache_clear()
    yield folder
    load_weights.cache_clear()
    load_sources.cache_clear()


def _checkpoint(tmp_path, payload=b"params"):
    step = tmp_path / "ckpt" / "5"
    (step / "items").mkdir(parents=True)
    (step / "items" / "data").write_bytes(payload)
    (step / "_CHECKPOINT_METADATA").write_text("{}")
    return step


def _register(recipes, *entries):
    (recipes / "weights.yaml").write_text(json.dumps({"weights": list(entries)}))
    load_weights.cache_clear()


def _maxtext_entry(step, **extra):
    checksum = checkpoint_inventory(str(step))["content_hash"]
    return {"name": "ext", "format": "maxtext", "uri": str(step), "license": "Apache-2.0",
            "provenance": {**PROVENANCE, "checksum": checksum}, **extra}


def test_a_cleared_maxtext_checkpoint_gives_load_parameters_path(tmp_path, recipes):
    step = _checkpoint(tmp_path)
    _register(recipes, _maxtext_entry(step))
    resolved = assert_weights_cleared(Storage(str(tmp_path / "root")), "ext")
    assert resolved.load_parameters_path == f"{step}/items"
    spec = TrainingRuns(runs={"child": {"model": "tiny-0.2m", "mixture": "m", "init": {"weights": "ext"}}}).spec("child")
    paths = run_paths(Storage(str(tmp_path / "root")), spec)
    assert paths.init_parameters == f"{step}/items"


@pytest.mark.parametrize("change, reason", [
    ({"license": "LicenseRef-proprietary"}, "license 'LicenseRef-proprietary' is not in the allowlist"),
    ({"provenance": PROVENANCE}, "provenance.checksum is missing"),
    ({"name": "other"}, "weights 'ext' are not in the weights registry"),
])
def test_an_uncleared_entry_is_refused_naming_the_reason(tmp_path, recipes, change, reason):
    step = _checkpoint(tmp_path)
    _register(recipes, {**_maxtext_entry(step), **change})
    with pytest.raises(WeightsNotClearedError, match="refusing to train from weights 'ext'") as info:
        assert_weights_cleared(Storage(str(tmp_path / "root")), "ext")
    assert reason in str(info.value)


def test_a_checkpoint_that_no_longer_matches_its_checksum_is_refused(tmp_path, recipes):
    step = _checkpoint(tmp_path)
    _register(recipes, _maxtext_entry(step))
    (step / "items" / "data").write_bytes(b"other params")  # replaced after it was registered
    with pytest.raises(WeightsNotClearedError, match="checksum mismatch"):
        assert_weights_cleared(Storage(str(tmp_path / "root")), "ext")


def test_a_run_entry_needs_the_parent_run_committed(tmp_path, recipes):
    _register(recipes, {"name": "parent", "format": "run", "uri": "tiny-x", "license": "MIT",
                        "provenance": {**PROVENANCE, "checksum": "abc"}})
    spec = TrainingRuns(runs={"child": {"model": "tiny-0.2m", "mixture": "m", "init": {"weights": "parent"}}}).spec("child")
    with pytest.raises(WeightsNotClearedError, match="training run 'tiny-x' has no committed final checkpoint"):
        run_paths(Storage(str(tmp_path / "root")), spec)


def test_a_run_entry_is_refused_when_a_source_behind_the_parent_is_not_cleared(tmp_path, recipes):
    storage = Storage(str(tmp_path / "root"))
    with storage.atomic_dir(layout.TRAINING, "tiny-x", layout.FINAL_DIR) as staged:
        staged.write_json({"checkpoint_uri": "/nowhere/3", "checkpoint_hash": "abc"}, "result.json")
        staged.write_json({"licenses": {LINEAGE_SOURCE: "x"}}, "_provenance.json")
    _register(recipes, {"name": "parent", "format": "run", "uri": "tiny-x", "license": "MIT",
                        "provenance": {**PROVENANCE, "checksum": "abc"}})
    # raw_corpus never ran in this storage: the source behind the parent has no inventory
    with pytest.raises(WeightsNotClearedError, match=f"source '{LINEAGE_SOURCE}' behind run 'tiny-x' is not cleared"):
        assert_weights_cleared(storage, "parent")


def test_maxtext_keys_load_the_init_parameters_only_when_declared():
    spec = TrainingRuns(runs={"r": {"model": "tiny-0.2m", "mixture": "m"}}).spec("r")

    class Mixture:
        train_glob = validation_glob = tokenizer_uri = "x"
        tokenizer_vocab_size = 256

    plain = maxtext_keys(spec, Mixture(), RunPaths("/o", "r", "/c"))
    assert "load_parameters_path" not in plain
    init = maxtext_keys(spec, Mixture(), RunPaths("/o", "r", "/c", init_parameters="/ck/5/items"))
    assert init["load_parameters_path"] == "/ck/5/items"


def test_the_registry_refuses_unknown_fields_naming_the_file(tmp_path):
    path = tmp_path / "weights.yaml"
    path.write_text("weights:\n  - {name: a, format: run, uri: r, license: MIT, licence: MIT}\n")
    with pytest.raises(RecipeError, match=r"weights.yaml.*weights.0.licence"):
        load_recipe(path, WeightsRegistry)


def test_the_shipped_registry_loads():
    load_weights.cache_clear()
    assert "tiny-sample" in load_weights().names
    assert weights_module.WEIGHTS_RECIPE == "weights.yaml"


def test_a_new_parent_checksum_changes_the_child_runs_spec_version(tmp_path, recipes):
    from marin_assets.defs.train.training_assets import run_spec_version

    runs = TrainingRuns(runs={"child": {"model": "tiny-0.2m", "mixture": "m", "init": {"weights": "parent"}},
                              "plain": {"model": "tiny-0.2m", "mixture": "m"}})
    entry = {"name": "parent", "format": "run", "uri": "tiny-x", "license": "MIT",
             "provenance": {**PROVENANCE, "checksum": "a" * 64}}
    _register(recipes, entry)
    before = run_spec_version(runs, "child"), run_spec_version(runs, "plain")
    _register(recipes, {**entry, "provenance": {**PROVENANCE, "checksum": "b" * 64}})  # the parent retrained
    assert run_spec_version(runs, "child") != before[0]
    assert run_spec_version(runs, "plain") == before[1]


def _hf_folder(tmp_path, **config):
    """An HF Llama folder shaped like tiny-0.2m (vocab 256: the tokenizer's rounded up), random weights."""
    from safetensors.numpy import save_file

    folder = tmp_path / "hf"
    folder.mkdir()
    base = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 4, "head_dim": 16, "vocab_size": 256,
            "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False}
    (folder / "config.json").write_text(json.dumps({**base, **config}))
    save_file({"model.embed_tokens.weight": np.zeros((256, 64), np.float32)}, str(folder / "model.safetensors"))
    return folder


def _hf_entry(folder):
    checksum = checkpoint_inventory(str(folder))["content_hash"]
    return {"name": "hf", "format": "hf", "uri": str(folder), "license": "Apache-2.0",
            "provenance": {**PROVENANCE, "checksum": checksum}}


def test_an_hf_folder_that_does_not_fit_the_runs_model_is_refused_naming_the_field(tmp_path, recipes):
    _register(recipes, _hf_entry(_hf_folder(tmp_path, hidden_size=128, rope_theta=500000.0)))
    spec = TrainingRuns(runs={"child": {"model": "tiny-0.2m", "mixture": "m", "init": {"weights": "hf"}}}).spec("child")
    with pytest.raises(WeightsNotClearedError, match="refusing to train from weights 'hf'") as info:
        run_paths(Storage(str(tmp_path / "root")), spec)
    assert "hidden_size is 128, model recipe 'tiny-0.2m' has 64 (architecture.emb_dim)" in str(info.value)
    assert "rope_theta is 500000.0" in str(info.value)
    assert not (tmp_path / "root" / layout.WEIGHTS).exists()  # refused before any conversion


def test_an_hf_folder_of_another_vocab_is_refused_once_the_mixture_is_known():
    spec = TrainingRuns(runs={"r": {"model": "tiny-0.2m", "mixture": "m"}}).spec("r")

    class Mixture:
        train_glob = validation_glob = tokenizer_uri = "x"
        tokenizer_vocab_size = 300  # rounded up to 384 embedding rows

    config = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 4, "head_dim": 16, "vocab_size": 256,
              "rms_norm_eps": 1e-5}  # HF Llama's default is 1e-6: left out, it would not fit either
    with pytest.raises(ValueError, match=r"vocab_size is 256, model recipe 'tiny-0.2m' has 384"):
        maxtext_keys(spec, Mixture(), RunPaths("/o", "r", "/c", init_parameters="/w/0/items", init_hf_config=config))
    fits = maxtext_keys(spec, Mixture(), RunPaths("/o", "r", "/c", init_parameters="/w/0/items",
                                                  init_hf_config={**config, "vocab_size": 384}))
    assert fits["load_parameters_path"] == "/w/0/items"
