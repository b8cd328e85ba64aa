"""Quantized training: the recipe switch `quantization: none | int8 | fp8` -> MaxText's `quantization` key (AQT).

int8 (AQT dynamic-range int8 matmuls) runs everywhere, CPU included. fp8 needs fp8 matrix units:
none of the CPU, the TPU generations we launch on (v4, v5e, v5p, v6e) or an A100 has them (the
GPU catalog says which GPU does), so a run asking for fp8 there is refused before launch, naming the hardware.
"""

from __future__ import annotations

from typing import Any

from marin_assets.train.hardware import ResourceConfig

# recipe value -> MaxText keys (none adds no key: an unquantized run's config is what it always was)
MAXTEXT_KEYS: dict[str, dict[str, Any]] = {
    "none": {},
    "int8": {"quantization": "int8"},
    "fp8": {"quantization": "fp8"},
}
FP8_TPU_GENERATIONS: frozenset[str] = frozenset()  # none of tpu_catalog's generations has fp8 units


def maxtext_keys(quantization: str) -> dict[str, Any]:
    return dict(MAXTEXT_KEYS[quantization])


def hardware_problem(quantization: str, resources: ResourceConfig) -> str | None:
    """Why this hardware cannot train with `quantization`, or None when it can."""
    if quantization != "fp8":
        return None
    if resources.accelerator == "cpu":
        return "quantization fp8 needs fp8 matrix units; the CPU has none (use int8 or none)"
    if resources.accelerator == "tpu":
        tpu = resources.tpu
        if tpu.generation not in FP8_TPU_GENERATIONS:
            return (f"quantization fp8 needs fp8 matrix units; TPU {tpu.name} (generation {tpu.generation}) "
                    f"has none (use int8 or none)")
        return None
    gpu = resources.gpu
    if gpu is None or not gpu.fp8:
        return (f"quantization fp8 needs fp8 tensor cores (Hopper H100/H200, Ada L4); GPU "
                f"{gpu.name if gpu else 'of unknown type'} has none (use int8 or none)")
    return None
