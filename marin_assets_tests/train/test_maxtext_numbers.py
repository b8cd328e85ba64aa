"""Preflight vs MaxText's own numbers: the yml we write, loaded by MaxText's pyconfig, gives exactly
the FLOPs (`calculate_tflops_training_per_device`) and parameter count (abstract model) we predict."""

import os

import pytest

from marin_assets.core.storage import Storage
from marin_assets.train.run_folder import plan_run, run_paths
from marin_assets.train.maxtext_config import cli_args, maxtext_keys, write_maxtext_yaml
from marin_assets.train.runs import TrainingRunSpec
from marin_assets_tests.train.mixture_fixture import build_mixture

pytestmark = pytest.mark.slow

SHAPES = [
    ("tiny-0.2m", {}),
    ("tiny-10m", {}),
    ("150m", {"remat_policy": "minimal"}),
    ("8b", {}),  # grouped-query attention 32/8, 4k context
    ("tiny-qwen3-0.2m", {}),  # qwen3 block: QK-norm, GQA 4/2
    ("tiny-moe-0.5m", {}),  # mixtral MoE: 4 experts, top-2, capacity factor 1.25
    ("tiny-moe-0.5m", {"architecture": {"capacity_factor": None, "num_experts": 8, "num_experts_per_tok": 3}}),
]


@pytest.fixture(scope="module")
def mixture(tmp_path_factory):
    return build_mixture(tmp_path_factory.mktemp("storage"))


def _maxtext_config(yml_path):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import maxtext  # noqa: F401
    from maxtext.configs import pyconfig

    return pyconfig.initialize(["train", yml_path])


def _maxtext_param_count(config):
    from flax import nnx
    from maxtext.utils import max_utils, maxtext_utils, model_creation_utils

    mesh = maxtext_utils.get_mesh_from_config(config)
    _, model = model_creation_utils.create_nnx_abstract_model(config, mesh)
    return int(max_utils.calculate_num_params_from_pytree(nnx.state(model, nnx.Param)))


@pytest.mark.parametrize("model_name,overrides", SHAPES)
def test_flops_and_params_match_maxtext(model_name, overrides, mixture, tmp_path):
    from maxtext.utils.maxtext_utils import calculate_tflops_training_per_device

    spec = TrainingRunSpec(run_name=f"check-{model_name}", model=model_name, mixture=mixture.name,
                           budget={"steps": 100}, maxtext_overrides=overrides)
    if overrides:  # recipe fields, not MaxText keys: rebuild the model recipe with them
        model = spec.model.model_dump()
        model.update({k: {**model[k], **v} if isinstance(v, dict) else v for k, v in overrides.items()})
        spec = spec.model_copy(update={"model": type(spec.model).model_validate(model), "maxtext_overrides": {}})
    report = plan_run(spec, mixture)
    keys = maxtext_keys(spec, mixture, run_paths(Storage(str(tmp_path)), spec))
    config = _maxtext_config(write_maxtext_yaml(keys, tmp_path / "maxtext.yml"))

    total_tflops, _, _ = calculate_tflops_training_per_device(config, log=False)
    assert report.flops_per_device_step == pytest.approx(total_tflops * 1e12, rel=1e-9)
    assert report.num_params == _maxtext_param_count(config)
    assert config.decoder_block.value == spec.model.architecture.decoder_block
    if config.num_experts > 1:  # MoE: FLOPs follow the active experts, memory holds them all
        assert report.active_params < report.num_params
        assert (config.num_experts, config.num_experts_per_tok) == (
            spec.model.architecture.num_experts, spec.model.architecture.num_experts_per_tok)
    assert config.learning_rate_schedule_steps == config.steps == 100  # pinned for exact resume
    assert config.vocab_size == report.vocab_size >= mixture.tokenizer_vocab_size


def test_cli_args_equal_the_yaml(mixture, tmp_path):
    """Launchers that pass key=value arguments get the same config as the yml file."""
    spec = TrainingRunSpec(run_name="cli", model="tiny-0.2m", mixture=mixture.name)
    keys = maxtext_keys(spec, mixture, run_paths(Storage(str(tmp_path)), spec))
    from maxtext.configs import pyconfig

    from_yaml = _maxtext_config(write_maxtext_yaml(keys, tmp_path / "maxtext.yml"))
    base = os.path.join(os.path.dirname(pyconfig.__file__), "base.yml")
    from_cli = pyconfig.initialize(["train", base, *cli_args(keys)])
    for key in keys:
        assert getattr(from_cli, key) == getattr(from_yaml, key), key
