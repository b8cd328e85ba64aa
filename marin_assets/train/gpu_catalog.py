"""The NVIDIA GPU types we can train on: memory and peak dense bf16 FLOP/s per device, GKE labels.

Used by preflight's fit check (memory per device), by MFU (peak FLOP/s) and by the Kubernetes
launcher (node selector, machine type, GPUs per node). Peak figures are the vendors' *dense*
numbers (the datasheets also print a 2x "with sparsity" figure, which no dense training reaches).
Memory is what the driver reports for the device (nvidia-smi's MiB), in GiB.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB_PER_GIB = 1024


@dataclass(frozen=True)
class GpuSpec:
    name: str                       # the recipe's `gpu_type`
    memory_gib: float               # per device
    peak_bf16_tflops: float         # dense, per device
    gke_accelerator: str            # GKE `cloud.google.com/gke-accelerator`
    machine_type: str               # the GCE machine type with `gpus_per_node` of them
    gpus_per_node: int
    maxtext_name: str               # MaxText's accelerator_to_spec_map name, where it has one
    fp8: bool = False               # fp8 tensor cores (Hopper, Ada): quantization fp8 can train here


GPU_TYPES: dict[str, GpuSpec] = {
    spec.name: spec
    for spec in (
        # NVIDIA H100 Tensor Core GPU datasheet (SXM5): BF16 Tensor Core 1,979 TFLOPS with sparsity,
        # 989.4 dense; 80 GB HBM3 (81,559 MiB reported). GKE A3 High: a3-highgpu-8g.
        GpuSpec("h100-80gb", 81559 / MIB_PER_GIB, 989.4, "nvidia-h100-80gb", "a3-highgpu-8g", 8, "a3", fp8=True),
        # A3 Mega (same H100 SXM5, more network): a3-megagpu-8g.
        GpuSpec("h100-mega-80gb", 81559 / MIB_PER_GIB, 989.4, "nvidia-h100-mega-80gb", "a3-megagpu-8g", 8, "a3", fp8=True),
        # NVIDIA H200 datasheet (SXM): BF16 1,979 TFLOPS with sparsity, 989 dense; 141 GB HBM3e
        # (143,771 MiB reported). GKE A3 Ultra: a3-ultragpu-8g.
        GpuSpec("h200-141gb", 143771 / MIB_PER_GIB, 989.4, "nvidia-h200-141gb", "a3-ultragpu-8g", 8, "a3ultra", fp8=True),
        # NVIDIA A100 Tensor Core GPU datasheet: BF16 Tensor Core 312 TFLOPS dense (624 with sparsity);
        # 40 GB HBM2 (40,960 MiB) on A2 Standard a2-highgpu-8g, 80 GB HBM2e (81,920 MiB) on A2 Ultra.
        GpuSpec("a100-40gb", 40960 / MIB_PER_GIB, 312.0, "nvidia-tesla-a100", "a2-highgpu-8g", 8, "a100"),
        GpuSpec("a100-80gb", 81920 / MIB_PER_GIB, 312.0, "nvidia-a100-80gb", "a2-ultragpu-8g", 8, "a100"),
        # NVIDIA L4 Tensor Core GPU datasheet: BF16 242 TFLOPS with sparsity, 121 dense; 24 GB GDDR6
        # (23,034 MiB reported). GKE G2: g2-standard-96 has 8.
        GpuSpec("l4-24gb", 23034 / MIB_PER_GIB, 121.0, "nvidia-l4", "g2-standard-96", 8, "l4", fp8=True),
    )
}


class UnknownGpuType(ValueError):
    pass


def gpu_spec(name: str) -> GpuSpec:
    try:
        return GPU_TYPES[name]
    except KeyError:
        raise UnknownGpuType(
            f"unknown gpu_type {name!r}; change resources.gpu_type to one of: {', '.join(GPU_TYPES)}"
        ) from None
