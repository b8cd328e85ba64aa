"""GPU ResourceConfig, the GPU catalog, preflight's GPU fit and the pre-launch environment check (CPU only)."""

import sys

import pytest
from pydantic import ValidationError

from marin_assets.train import gpu_environment
from marin_assets.train.gpu_catalog import GPU_TYPES, gpu_spec
from marin_assets.train.gpu_environment import (GpuEnvironmentError, device_problems, plugin_problems,
                                                require_gpu_environment)
from marin_assets.train.maxtext_config import RunPaths, maxtext_keys
from marin_assets.train.models import load_model_recipe
from marin_assets.train.preflight import preflight
from marin_assets.train.hardware import MeshError, ResourceConfig
from marin_assets.train.runs import TrainingRunSpec

H100X8 = {"accelerator": "gpu", "gpu_type": "h100-80gb", "chips_per_host": 8}


def test_catalog_has_the_datasheet_figures():
    assert {"h100-80gb", "h200-141gb", "a100-40gb", "a100-80gb", "l4-24gb"} <= set(GPU_TYPES)
    assert gpu_spec("h100-80gb").peak_bf16_tflops == 989.4 and gpu_spec("a100-80gb").peak_bf16_tflops == 312
    assert gpu_spec("l4-24gb").peak_bf16_tflops == 121
    assert 79 < gpu_spec("h100-80gb").memory_gib < 80 and 140 < gpu_spec("h200-141gb").memory_gib < 141
    assert gpu_spec("a100-40gb").memory_gib == 40


def test_gpu_resource_fills_memory_and_maps_to_maxtext():
    r = ResourceConfig(**H100X8)
    assert r.launcher == "local" and r.num_devices() == 8 and r.memory_per_chip_gib == gpu_spec("h100-80gb").memory_gib
    assert r.peak_tflops_per_device == 989.4
    assert r.maxtext_hardware_keys() == {"hardware": "gpu", "dtype": "bfloat16", "attention": "dot_product"}
    assert r.maxtext_parallelism_keys()["ici_fsdp_parallelism"] == 8
    env = r.process_env()
    assert env["JAX_PLATFORMS"] == "cuda" and env["JAX_CUDA_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"
    assert "--xla_gpu_enable_latency_hiding_scheduler=true" in env["XLA_FLAGS"]
    assert "xla_force_host_platform_device_count" not in env["XLA_FLAGS"]
    multi = ResourceConfig(**H100X8, hosts_per_slice=2)
    assert multi.launcher == "kubernetes" and multi.maxtext_hardware_keys()["hardware"] == "gpu_multiprocess"


@pytest.mark.parametrize("fields, message", [
    ({"accelerator": "gpu"}, "gpu_type is required"),
    ({"accelerator": "gpu", "gpu_type": "h100"}, "change resources.gpu_type to one of: h100-80gb"),
    ({"accelerator": "cpu", "gpu_type": "h100-80gb"}, "gpu_type is set but accelerator is 'cpu'"),
    ({**H100X8, "chips_per_host": 16}, "chips_per_host=16 exceeds the 8 GPUs"),
    ({**H100X8, "memory_per_chip_gib": 40}, "contradicts gpu_type h100-80gb"),
])
def test_bad_gpu_resources_are_refused_naming_the_knob(fields, message):
    with pytest.raises(ValidationError, match=message):
        ResourceConfig(**fields)


def test_mesh_not_dividing_the_gpus_names_the_knob():
    r = ResourceConfig(**H100X8, parallelism={"ici": {"fsdp": 3}})
    with pytest.raises(MeshError, match=r"change parallelism\.ici\.fsdp"):
        r.resolved_mesh()


def test_preflight_fits_150m_on_h100_and_refuses_8b_on_l4():
    fits = preflight(load_model_recipe("150m"), ResourceConfig(**H100X8), 32000, steps=10)
    assert fits.fits and fits.memory.available_bytes == pytest.approx(gpu_spec("h100-80gb").memory_gib * 1024**3)
    big = preflight(load_model_recipe("8b"), ResourceConfig(accelerator="gpu", gpu_type="l4-24gb"), 128256, steps=10)
    assert not big.fits and "pick a larger gpu_type" in big.problems[0]


def test_gpu_run_config_keys(tmp_path):
    spec = TrainingRunSpec(run_name="g", model="150m", mixture="m", resources=H100X8, budget={"steps": 20})
    mixture = type("M", (), {"train_glob": "t", "validation_glob": "v", "tokenizer_uri": "tok",
                             "tokenizer_vocab_size": 32000})()
    keys = maxtext_keys(spec, mixture, RunPaths(str(tmp_path), "g", str(tmp_path / "jax")))
    assert keys["hardware"] == "gpu" and keys["dtype"] == "bfloat16" and keys["per_device_batch_size"] == 32
    assert keys["ici_fsdp_parallelism"] == 8 and keys["grain_worker_count"] == 1


def test_plugin_version_must_match_jax_exactly():
    assert plugin_problems({"jax": "0.12.0.1", "jax-cuda12-plugin": "0.12.0.1", "jax-cuda12-pjrt": "0.12.0.1"}) == []
    (missing,) = plugin_problems({"jax": "0.12.0.1", "jaxlib": "0.12.0.1"})
    assert "no CUDA plugin" in missing and "uv sync --extra gpu" in missing
    (bad,) = plugin_problems({"jax": "0.12.0.1", "jax-cuda12-plugin": "0.10.2", "jax-cuda12-pjrt": "0.12.0.1"})
    assert "jax-cuda12-plugin 0.10.2 differs from jax 0.12.0.1" in bad and "jax-cuda12-plugin==0.12.0.1" in bad


def test_device_problems_name_the_knob():
    assert device_problems(8, 8, "h100-80gb") == []
    assert "chips_per_host=4 but JAX sees 1 GPU" in device_problems(1, 4, "h100-80gb")[0]
    assert "no visible NVIDIA GPU" in device_problems(0, 1, "h100-80gb", "Unknown backend cuda")[0]


def test_this_cpu_machine_refuses_a_gpu_run_before_launch():
    # The default (CPU-only) install: no CUDA plugin, so the refusal names the extra to install.
    r = ResourceConfig(accelerator="gpu", gpu_type="h100-80gb")
    with pytest.raises(GpuEnvironmentError, match="no CUDA plugin for JAX is installed.*uv sync --extra gpu"):
        require_gpu_environment(1, r.gpu_type, r.process_env())


@pytest.mark.slow
def test_device_probe_reports_why_jax_cannot_see_a_gpu():
    # A real JAX process with the run's env: on this machine CUDA is not a known platform.
    kinds, error = gpu_environment.probe_devices(ResourceConfig(**H100X8).process_env())
    assert kinds == [] and error
    cpu_kinds, cpu_error = gpu_environment.probe_devices({"JAX_PLATFORMS": "cpu"})
    assert cpu_error is None and len(cpu_kinds) >= 1, sys.executable
