"""The TPU slice types we can launch on: chips, hosts, topology, memory and peak FLOPs per chip.

Names follow Cloud TPU (`v5litepod-16`, `v4-32`, `v5p-8`, `v6e-16`). For v4 and v5p the number in
the name counts TensorCores (2 per chip), so `v4-32` has 16 chips; for v5e and v6e it counts chips.
GKE labels (`gke_accelerator`, `topology`) and machine types are what a node pool / pod selector
needs; `maxtext_name` is MaxText's `compile_topology` name (utils/accelerator_to_spec_map.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TpuSpec:
    name: str
    generation: str                # v4 | v5e | v5p | v6e
    chips: int                     # chips in one slice
    hosts: int                     # VMs (pods on GKE) in one slice
    topology: str                  # GKE `cloud.google.com/gke-tpu-topology`
    hbm_gib_per_chip: float
    peak_bf16_tflops_per_chip: float
    gke_accelerator: str           # GKE `cloud.google.com/gke-tpu-accelerator`
    machine_type: str
    maxtext_name: str

    @property
    def chips_per_host(self) -> int:
        return self.chips // self.hosts

    @property
    def multi_host(self) -> bool:
        return self.hosts > 1


@dataclass(frozen=True)
class _Generation:
    generation: str
    hbm_gib: float
    peak_tflops: float
    gke_accelerator: str
    name_prefix: str
    maxtext_prefix: str
    cores_per_chip: int            # how the number in the slice name relates to chips


_V5E = _Generation("v5e", 16, 197, "tpu-v5-lite-podslice", "v5litepod", "v5e", 1)
_V6E = _Generation("v6e", 32, 918, "tpu-v6e-slice", "v6e", "v6e", 1)
_V4 = _Generation("v4", 32, 275, "tpu-v4-podslice", "v4", "v4", 2)
_V5P = _Generation("v5p", 95, 459, "tpu-v5p-slice", "v5p", "v5p", 2)

# (generation, number in the name, topology, hosts, machine type)
_SLICES = [
    (_V5E, 1, "1x1", 1, "ct5lp-hightpu-1t"),
    (_V5E, 4, "2x2", 1, "ct5lp-hightpu-4t"),
    (_V5E, 8, "2x4", 1, "ct5lp-hightpu-8t"),
    (_V5E, 16, "4x4", 4, "ct5lp-hightpu-4t"),
    (_V5E, 32, "4x8", 8, "ct5lp-hightpu-4t"),
    (_V5E, 64, "8x8", 16, "ct5lp-hightpu-4t"),
    (_V5E, 128, "8x16", 32, "ct5lp-hightpu-4t"),
    (_V5E, 256, "16x16", 64, "ct5lp-hightpu-4t"),
    (_V6E, 1, "1x1", 1, "ct6e-standard-1t"),
    (_V6E, 4, "2x2", 1, "ct6e-standard-4t"),
    (_V6E, 8, "2x4", 1, "ct6e-standard-8t"),
    (_V6E, 16, "4x4", 4, "ct6e-standard-4t"),
    (_V6E, 32, "4x8", 8, "ct6e-standard-4t"),
    (_V6E, 64, "8x8", 16, "ct6e-standard-4t"),
    (_V6E, 128, "8x16", 32, "ct6e-standard-4t"),
    (_V6E, 256, "16x16", 64, "ct6e-standard-4t"),
    (_V4, 8, "2x2x1", 1, "ct4p-hightpu-4t"),
    (_V4, 16, "2x2x2", 2, "ct4p-hightpu-4t"),
    (_V4, 32, "2x2x4", 4, "ct4p-hightpu-4t"),
    (_V4, 64, "2x4x4", 8, "ct4p-hightpu-4t"),
    (_V4, 128, "4x4x4", 16, "ct4p-hightpu-4t"),
    (_V4, 256, "4x4x8", 32, "ct4p-hightpu-4t"),
    (_V5P, 8, "2x2x1", 1, "ct5p-hightpu-4t"),
    (_V5P, 16, "2x2x2", 2, "ct5p-hightpu-4t"),
    (_V5P, 32, "2x2x4", 4, "ct5p-hightpu-4t"),
    (_V5P, 64, "2x4x4", 8, "ct5p-hightpu-4t"),
    (_V5P, 128, "4x4x4", 16, "ct5p-hightpu-4t"),
    (_V5P, 256, "4x4x8", 32, "ct5p-hightpu-4t"),
]


def _build() -> dict[str, TpuSpec]:
    table = {}
    for gen, number, topology, hosts, machine in _SLICES:
        name = f"{gen.name_prefix}-{number}"
        table[name] = TpuSpec(
            name=name,
            generation=gen.generation,
            chips=number // gen.cores_per_chip,
            hosts=hosts,
            topology=topology,
            hbm_gib_per_chip=gen.hbm_gib,
            peak_bf16_tflops_per_chip=gen.peak_tflops,
            gke_accelerator=gen.gke_accelerator,
            machine_type=machine,
            maxtext_name=f"{gen.maxtext_prefix}-{number}",
        )
    return table


TPU_TYPES: dict[str, TpuSpec] = _build()


class UnknownTpuType(ValueError):
    pass


def tpu_spec(name: str) -> TpuSpec:
    try:
        return TPU_TYPES[name]
    except KeyError:
        raise UnknownTpuType(f"unknown tpu_type {name!r}; supported: {', '.join(TPU_TYPES)}") from None
