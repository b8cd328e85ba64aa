"""HF export of a real tiny run: the numpy HF-Llama reference agrees with MaxText's forward pass; mapping bugs fail.

The run is trained for real (training stage's Dagster assets); MaxText's logits come from
train.checkpoint_model (MaxText's own model and restore); the reference is train.hf_llama_numpy,
which reads only the exported folder (config.json + safetensors), as transformers would.
"""

import json

import numpy as np
import pytest
import yaml

from marin_assets.train import hf_export
from marin_assets.train.checkpoint_model import CheckpointModel
from marin_assets.train.hf_export import Llama2Export, write_hf_folder
from marin_assets.train.hf_reference import compare_logits
from marin_assets_tests.evaluation.trained_run import train_tiny_run

pytestmark = pytest.mark.slow

ROWS = [[2, 40, 100, 44, 150, 7, 3], list(range(2, 90))]
TOLERANCE = {"max_abs_diff": 1e-3, "min_top1_agreement": 1.0}


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    run_dir = train_tiny_run(tmp_path_factory.mktemp("storage"))
    return run_dir, CheckpointModel.load(str(run_dir))


def _export(model, folder, exporter=None):
    run_dir, ckpt = model
    keys = yaml.safe_load((run_dir / "maxtext.yml").read_text())
    folder.mkdir()
    if exporter is not None:
        hf_export.HF_ARCHITECTURES["llama2"], saved = exporter, hf_export.HF_ARCHITECTURES["llama2"]
    try:
        files = write_hf_folder(str(folder), keys, ckpt.params, keys["tokenizer_path"],
                                ckpt.tokenizer.bos_id, ckpt.tokenizer.eos_id)
    finally:
        if exporter is not None:
            hf_export.HF_ARCHITECTURES["llama2"] = saved
    return files, compare_logits(str(folder), ckpt.logits, ROWS, TOLERANCE["max_abs_diff"],
                                 TOLERANCE["min_top1_agreement"])


def test_the_export_matches_maxtexts_logits(model, tmp_path):
    files, figures = _export(model, tmp_path / "hf")
    print(f"HF export logits check: {figures}")
    assert figures["passed"], figures
    assert {"config.json", "generation_config.json", "model.safetensors", "tokenizer.json"} <= set(files)
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLM"] and config["num_hidden_layers"] == 2


class _WithMaxTextsRopeHook(Llama2Export):
    """MaxText's LLAMA31 hooks unfiltered: the interleaved->half RoPE permutation a default llama2 must not get."""

    def hooks(self):
        from maxtext.checkpoint_conversion.utils.param_mapping import LLAMA31_MAXTEXT_TO_HF_PARAM_HOOK_FN

        return LLAMA31_MAXTEXT_TO_HF_PARAM_HOOK_FN({"num_hidden_layers": self.layers, "head_dim": self.head_dim},
                                                   None, scan_layers=False, saving_to_hf=True)


class _SwappedGateUp(Llama2Export):
    def names(self):
        names = super().names()
        gate, up = "params-decoder-layers_0-mlp-wi_0-kernel", "params-decoder-layers_0-mlp-wi_1-kernel"
        names[gate], names[up] = names[up], names[gate]
        return names


class _TransposedValue(Llama2Export):
    def tensors(self, flat):
        out = super().tensors(flat)
        v = out["model.layers.1.self_attn.v_proj.weight"]
        out["model.layers.1.self_attn.v_proj.weight"] = np.ascontiguousarray(v.reshape(v.shape[::-1]).T)
        return out


@pytest.mark.parametrize("exporter", [_WithMaxTextsRopeHook, _SwappedGateUp, _TransposedValue],
                         ids=["rope-layout", "swapped-gate-up", "transposed-value"])
def test_a_mapping_bug_fails_the_logits_check(model, tmp_path, exporter):
    _, figures = _export(model, tmp_path / "hf", exporter)
    assert not figures["passed"], figures


def test_hf_export_asset_commits_the_folder_and_its_blocking_check_passes(model, tmp_path, monkeypatch):
    import shutil

    import dagster as dg

    from marin_assets.core.recipes import PACKAGE_RECIPES
    from marin_assets_tests.train.stub_hub import StubHub

    from marin_assets.defs.train.definitions import build_defs
    from marin_assets.train.runs import TrainingRuns
    from marin_assets_tests.evaluation.trained_run import RUN, SPEC
    from marin_assets_tests.local_resources import local_resources

    run_dir, _ = model
    root = run_dir.parent.parent
    recipes = tmp_path / "recipes"  # the export recipe switched to publish to a (stub) Hub repository
    shutil.copytree(PACKAGE_RECIPES, recipes)
    (tmp_path / "sample_data").symlink_to(PACKAGE_RECIPES.parent / "sample_data")
    text = (recipes / "hf_export.yaml").read_text().replace("hub_repo: null", "hub_repo: marin/tiny-eval")
    (recipes / "hf_export.yaml").write_text(text)
    monkeypatch.setenv("MARIN_RECIPES_DIR", str(recipes))
    monkeypatch.setenv("MARIN_DATA_ROOTS", str(PACKAGE_RECIPES.parent / "sample_data"))
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    with StubHub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        defs = build_defs(TrainingRuns(runs={RUN: SPEC}), baselines_dir=root / "baselines")
        assets = [defs.get_assets_def("training_run"), defs.get_assets_def("hf_export"),
                  *[c for c in defs.asset_checks if "hf_logits_match" in str(c.check_keys)]]
        with dg.DagsterInstance.ephemeral() as instance:
            result = dg.materialize(assets, partition_key=RUN, instance=instance,
                                    resources=local_resources(str(root)), selection=dg.AssetSelection.assets("hf_export"))
    assert result.success
    # published only after the asset verified the logits; every file of the folder reached the repository
    assert set(hub.files["marin/tiny-eval"]) >= {"config.json", "model.safetensors", "tokenizer.json"}
    assert hub.files["marin/tiny-eval"]["model.safetensors"] == (run_dir / "hf" / "model.safetensors").read_bytes()
    published = result.asset_materializations_for_node("hf_export")[0].metadata["published"].value
    assert published.startswith(hub.endpoint)
    [check] = result.get_asset_check_evaluations()
    print(f"hf_logits_match: {check.description}")
    assert check.passed and check.check_name == "hf_logits_match"
    manifest = json.loads((run_dir / "hf" / "_provenance.json").read_text())
    final = json.loads((run_dir / "final" / "result.json").read_text())
    assert manifest["export"]["checkpoint_hash"] == final["checkpoint_hash"]
    assert (run_dir / "hf" / "model.safetensors").exists() and (run_dir / "hf" / "_COMMITTED").exists()
