"""Registered architectures: discovery, recipe validation (file + field named), MaxText keys, mesh and fp8 rules.

MaxText's own parameter and FLOP numbers for each architecture are compared in test_maxtext_numbers.
"""

from pathlib import Path

import pytest
import yaml

from marin_assets.core.recipes import RecipeError, load_recipe
from marin_assets.train import architectures
from marin_assets.train.architectures import ARCHITECTURES
from marin_assets.train.maxtext_config import model_keys
from marin_assets.train.models import ModelRecipe, load_model_recipe, model_recipe_path
from marin_assets.train.preflight import preflight
from marin_assets.train.hardware import ResourceConfig
from marin_assets.train.runs import TrainingRunSpec

MOE = "tiny-moe-0.5m"


def _write_recipe(tmp_path, name, **arch_changes):
    raw = yaml.safe_load(model_recipe_path(name).read_text())
    raw["architecture"].update(arch_changes)
    raw["architecture"] = {k: v for k, v in raw["architecture"].items() if v is not None}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_every_module_of_the_folder_is_discovered_versioned_and_registered():
    """A module added to architectures/ is found by the registry and is in the package's code-version closure."""
    from marin_assets.core.import_graph import closure

    folder = Path(architectures.__file__).parent
    modules = {f"marin_assets.train.architectures.{p.stem}" for p in folder.glob("*.py")} - {"marin_assets.train.architectures.__init__"}
    assert modules <= closure(["marin_assets.train.architectures"])
    assert {m.__name__ for m in ARCHITECTURES.modules()} >= modules - {"marin_assets.train.architectures.base"}
    assert {"llama2", "qwen3", "mixtral"} <= set(ARCHITECTURES)
    for kind, cls in ARCHITECTURES.items():
        assert cls.model_fields["kind"].default == kind


def test_a_recipe_without_kind_is_llama2_with_its_old_maxtext_keys():
    """The dense recipes keep working unchanged: same block, same MaxText keys, no quantization key."""
    spec = TrainingRunSpec(run_name="r", model="tiny-0.2m", mixture="m")
    assert spec.model.architecture.kind == "llama2"
    assert "kind" not in spec.model.model_dump()["architecture"]  # its spec hash is what it was
    keys = model_keys(spec, 1024)
    assert {k: keys[k] for k in list(keys)[:8]} == {
        "model_name": "default", "decoder_block": "llama2", "base_emb_dim": 64, "base_num_decoder_layers": 2,
        "base_num_query_heads": 4, "base_num_kv_heads": 4, "head_dim": 16, "base_mlp_dim": 256}
    assert "quantization" not in keys and "num_experts" not in keys and "use_qk_norm" not in keys


def test_qwen3_and_mixtral_map_onto_their_maxtext_keys():
    qwen = model_keys(TrainingRunSpec(run_name="q", model="tiny-qwen3-0.2m", mixture="m"), 1024)
    assert qwen["decoder_block"] == "qwen3" and qwen["use_qk_norm"] is True
    moe = model_keys(TrainingRunSpec(run_name="m", model=MOE, mixture="m"), 1024)
    assert {k: moe[k] for k in ("decoder_block", "num_experts", "num_experts_per_tok", "base_moe_mlp_dim",
                                "capacity_factor", "load_balance_loss_weight", "sparse_matmul", "megablox")} == {
        "decoder_block": "mixtral", "num_experts": 4, "num_experts_per_tok": 2, "base_moe_mlp_dim": 256,
        "capacity_factor": 1.25, "load_balance_loss_weight": 0.01, "sparse_matmul": False, "megablox": False}
    tpu = TrainingRunSpec(run_name="t", model=MOE, mixture="m",
                          resources={"accelerator": "tpu", "tpu_type": "v5litepod-4"})
    assert model_keys(tpu, 1024)["megablox"] is True  # grouped-matmul kernels where the platform has them


def test_dropless_is_capacity_factor_minus_one(tmp_path):
    recipe = load_recipe(_write_recipe(tmp_path, MOE, capacity_factor=None), ModelRecipe)
    spec = TrainingRunSpec(run_name="d", model=recipe, mixture="m")
    assert model_keys(spec, 1024)["capacity_factor"] == -1.0


@pytest.mark.parametrize("changes,field,words", [
    ({"num_experts_per_tok": 5}, "architecture.mixtral", "num_experts_per_tok=5 exceeds num_experts=4"),
    ({"num_expert": 8}, "architecture.mixtral.num_expert", "Extra inputs are not permitted"),
    ({"shared_experts": 1}, "architecture.mixtral", "shared_experts=1"),
    ({"kind": "gpt9"}, "architecture", "gpt9"),
    ({"num_experts": 1}, "architecture.mixtral.num_experts", "greater than or equal to 2"),
])
def test_bad_moe_recipes_name_file_and_field(tmp_path, changes, field, words):
    path = _write_recipe(tmp_path, MOE, **changes)
    with pytest.raises(RecipeError) as err:
        load_recipe(path, ModelRecipe)
    assert str(path) in str(err.value) and f"field '{field}" in str(err.value) and words in str(err.value)


def test_moe_fields_on_a_dense_block_are_refused(tmp_path):
    with pytest.raises(RecipeError, match=r"architecture\.llama2\.num_experts.*Extra inputs"):
        load_recipe(_write_recipe(tmp_path, "tiny-0.2m", num_experts=4), ModelRecipe)


def test_expert_axis_must_divide_the_experts():
    def report(expert):
        res = ResourceConfig(accelerator="cpu", chips_per_host=expert, parallelism={"ici": {"expert": expert}})
        return preflight(load_model_recipe(MOE), res, tokenizer_vocab_size=1000, steps=10)

    assert report(2).fits and report(4).fits
    bad = report(3)
    assert not bad.fits and any("expert=3 does not divide architecture.num_experts=4" in p for p in bad.problems)


def test_preflight_counts_active_experts_for_flops_and_all_for_memory():
    moe = preflight(load_model_recipe(MOE), ResourceConfig(), tokenizer_vocab_size=1000, steps=10)
    dense = preflight(load_model_recipe("tiny-0.2m"), ResourceConfig(), tokenizer_vocab_size=1000, steps=10)
    assert moe.num_params > moe.active_params > dense.num_params == dense.active_params
    assert moe.memory.weights_bytes == 4 * moe.num_params  # every expert resident
    # FLOPs grow by top-k=2 experts' SwiGLU plus the router, not by all 4 experts
    extra = moe.flops_per_device_step - dense.flops_per_device_step
    bl, d, f = 4 * 128, 64, 256
    assert extra == pytest.approx(3 * 2 * (2 * bl * d * 4 + 2 * bl * f * d * 3 * 2 - 2 * bl * f * d * 3))


def test_moe_activation_memory_holds_the_routed_copies_as_maxtext_computes_them(tmp_path):
    """CPU's dense routing runs every expert on every token when dropless and fills E x C slots per sequence with a
    capacity factor (C = ceil(S k / E) x cf, MaxText's generate_masks); GPU/TPU's sparse kernels hold k copies."""
    moe = load_model_recipe(MOE)  # capacity_factor 1.25, 4 experts, top-2, seq 128
    arch, dense = moe.architecture, load_model_recipe("tiny-0.2m").architecture
    assert arch.expert_capacity(128) == 80 == int(max(-(-128 * 2 // 4) * 1.25, 1.25))
    assert arch.routed_copies_per_token("cpu", 128) == 4 * 80 / 128
    assert arch.routed_copies_per_token("gpu", 128) == arch.routed_copies_per_token("tpu", 128) == 2
    dropless = load_recipe(_write_recipe(tmp_path, MOE, capacity_factor=None), ModelRecipe)
    assert dropless.architecture.routed_copies_per_token("cpu", 128) == 4  # every expert, every token
    assert (dense.ffn_hidden_per_token("cpu", 128), dense.routing_per_token("cpu", 128)) == (256, 0)

    def activations(model, **resources):
        return preflight(model, ResourceConfig(**resources), tokenizer_vocab_size=1000, steps=10).memory.activations_bytes

    twin = load_model_recipe("tiny-0.2m")  # the same attention and batch, one expert's width
    cpu, cpu_dropless = activations(moe), activations(dropless)
    gpu = activations(moe, accelerator="gpu", gpu_type="h100-80gb", chips_per_host=1)
    assert min(cpu, cpu_dropless) > activations(twin)
    assert gpu > activations(twin, accelerator="gpu", gpu_type="h100-80gb", chips_per_host=1)
    # at seq 128 the capacity path's B S E C masks (3 x 320 per token) outweigh dropless's 4 full-width copies
    # remat full (the default) saves the layer inputs and recomputes one layer: its working set holds the copies
    tokens, d, f, e, c = 4 * 128, 64, 256, 4, 80
    routed = 2.5 * (2 * f) + 3 * e + 2.5 * d * 2 + 3 * e * c + e - 2 * f
    assert cpu - activations(twin) == pytest.approx(tokens * routed * 4)


@pytest.mark.parametrize("resources,hardware", [
    ({}, "CPU"),
    ({"accelerator": "tpu", "tpu_type": "v5litepod-16"}, "v5litepod-16"),
    ({"accelerator": "tpu", "tpu_type": "v4-8"}, "v4-8"),
    ({"accelerator": "gpu", "gpu_type": "a100-80gb"}, "a100-80gb"),
])
def test_fp8_is_refused_on_hardware_without_it(resources, hardware):
    with pytest.raises(ValueError, match=rf"quantization: quantization fp8 .*{hardware}"):
        TrainingRunSpec(run_name="f", model="tiny-0.2m", mixture="m", resources=resources, quantization="fp8")


def test_fp8_trains_on_a_gpu_with_fp8_units():
    spec = TrainingRunSpec(run_name="f", model="tiny-0.2m", mixture="m", quantization="fp8",
                           resources={"accelerator": "gpu", "gpu_type": "h100-80gb"})
    assert spec.resolved_quantization == "fp8"


def test_quantization_per_model_or_per_run_reaches_maxtext_and_the_spec_hash():
    plain = TrainingRunSpec(run_name="q", model="tiny-0.2m", mixture="m")
    run_int8 = plain.model_copy(update={"quantization": "int8"})
    model_int8 = TrainingRunSpec(run_name="q", model=plain.model.model_copy(update={"quantization": "int8"}), mixture="m")
    assert model_keys(run_int8, 1024)["quantization"] == model_keys(model_int8, 1024)["quantization"] == "int8"
    dumps = [s.model_dump(mode="json") for s in (plain, run_int8, model_int8)]
    assert dumps[0] != dumps[1] and dumps[0] != dumps[2]  # the run's data version changes with it
    with pytest.raises(ValueError, match="model.quantization: quantization fp8"):
        TrainingRunSpec(run_name="q", model=plain.model.model_copy(update={"quantization": "fp8"}), mixture="m")


def test_routing_collapse_fails_the_check_and_balance_passes():
    from marin_assets.defs.train.training_checks import routing_check_result
    from marin_assets.train.routing_stats import summarize

    arch = load_model_recipe(MOE).architecture.describe()
    balanced = summarize([[25, 25, 26, 24], [30, 20, 25, 25]], kept=[95, 100], routed=100)
    collapsed = summarize([[25, 25, 26, 24], [70, 10, 10, 10]], kept=None, routed=100)
    assert balanced["layers"][0]["dropped_fraction"] == pytest.approx(0.05) and collapsed["max_share"] == 0.7
    assert routing_check_result({"architecture": arch, "routing": balanced}).passed
    bad = routing_check_result({"architecture": arch, "routing": collapsed})
    assert not bad.passed and "layer 1: expert 0 takes 70.0%" in bad.description
    unmeasured = routing_check_result({"architecture": arch, "routing": {}, "routing_error": "boom"})
    assert not unmeasured.passed and "boom" in unmeasured.description
    assert routing_check_result({"architecture": {"kind": "llama2"}}).passed


def test_max_expert_share_below_an_even_share_is_refused(tmp_path):
    with pytest.raises(RecipeError, match="max_expert_share=0.2 is below an even share 1/4"):
        load_recipe(_write_recipe(tmp_path, MOE, max_expert_share=0.2), ModelRecipe)
