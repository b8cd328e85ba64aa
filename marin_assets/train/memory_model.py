"""What the trainer's measured peak memory is compared with: preflight's estimate, per process.

On GPU and TPU JAX reports one device's allocator peak, so the estimate is preflight's per-device
total. On CPU the trainer measures its process' peak RSS, which holds every simulated device and the
runtime itself (Python, JAX/XLA, MaxText, grain, TensorStore), so the estimate is the devices' sum plus
that runtime, measured on this project's quickstart runs (see docs/gpu_and_efficiency.md).
The tolerance is a recipe (recipes/training/efficiency.yaml): the check warns beyond it.
"""

from __future__ import annotations

from marin_assets.core.recipes import Recipe, load_recipe, recipes_dir
from marin_assets.train.hardware import ResourceConfig

EFFICIENCY_FILE = "training/efficiency.yaml"
GIB = 1024**3
# Peak RSS of a CPU trainer before the model's own arrays count (tiny-0.2m: its weights, optimizer and
# activations are ~10 MB): measured on the quickstart's tiny-sample runs (docs/gpu_and_efficiency.md).
CPU_RUNTIME_BYTES = 0.72 * GIB
# An MoE trainer's runtime is larger: MaxText's routed block compiles a bigger XLA program on CPU (top-k,
# one-hot dispatch, cumsum, per-expert einsums). Not activations (those are preflight's, a few MB here).
# Measured (docs/moe_and_quantization.md): cpu_moe_suite's dropless one-layer runs peak 33-74 MiB above
# cpu_suite's runs of the same size and budget; tiny-moe-0.5m (capacity factor, two layers) peaked at
# 0.914 GiB, ~0.12-0.15 GiB above tiny-0.2m's runs. 0.1 GiB keeps both well inside the 15% tolerance.
CPU_MOE_RUNTIME_BYTES = 0.1 * GIB


class EfficiencyRecipe(Recipe):
    memory_tolerance: float = 0.15    # |measured / estimate - 1| beyond this warns


def load_efficiency_recipe() -> EfficiencyRecipe:
    path = recipes_dir() / EFFICIENCY_FILE
    return load_recipe(path, EfficiencyRecipe) if path.exists() else EfficiencyRecipe()


def process_estimate_bytes(per_device_bytes: float | None, resources: ResourceConfig, moe: bool = False) -> float | None:
    """Preflight's estimate in the unit the trainer measures (CPU: the process; else: one device)."""
    if per_device_bytes is None:
        return None
    if resources.accelerator == "cpu":
        return per_device_bytes * resources.chips_per_host + CPU_RUNTIME_BYTES + (CPU_MOE_RUNTIME_BYTES if moe else 0)
    return per_device_bytes
