"""ResourceConfig: where a training run executes, and how that maps onto MaxText's mesh.

The same model recipe runs on a laptop CPU or a TPU pod by changing only this object. It knows the
device count (slices x hosts x chips), the memory per device, MaxText's `ici_*`/`dcn_*` keys and
hardware keys, the environment each training process needs, and which launcher runs it.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, model_validator

from marin_assets.core.recipes import Recipe
from marin_assets.train.gpu_catalog import GpuSpec, gpu_spec
from marin_assets.train.tpu_catalog import TpuSpec, tpu_spec

# Mesh axes we expose; each maps to MaxText's `ici_<axis>_parallelism` / `dcn_<axis>_parallelism`.
# Asset metadata: the partitions `marin materialize-all` may run on this machine (the runs whose
# launcher is "local", not the TPU ones). Assets without it are planned over all their partitions.
LOCAL_PARTITIONS_METADATA = "marin/local_partitions"
AXES = ("data", "fsdp", "fsdp_transpose", "sequence", "context", "tensor", "tensor_sequence", "pipeline", "expert")
AUTO = -1  # like MaxText: one axis per level may be -1 and absorbs the remaining devices


class MeshError(ValueError):
    """The mesh does not fit the devices; the message names the knob to change."""


class MeshAxes(Recipe):
    data: int = 1
    fsdp: int = 1
    fsdp_transpose: int = 1
    sequence: int = 1
    context: int = 1
    tensor: int = 1
    tensor_sequence: int = 1
    pipeline: int = 1
    expert: int = 1

    def resolve(self, devices: int, where: str) -> dict[str, int]:
        sizes = {axis: getattr(self, axis) for axis in AXES}
        bad = [a for a, n in sizes.items() if n == 0 or n < AUTO]
        if bad:
            raise MeshError(f"{where}.{bad[0]} = {sizes[bad[0]]}: axis sizes must be >= 1 or -1 (auto)")
        auto = [a for a, n in sizes.items() if n == AUTO]
        if len(auto) > 1:
            raise MeshError(f"{where}: only one axis may be -1 (auto), got {auto}; set {where}.{auto[1]} explicitly")
        fixed = math.prod(n for n in sizes.values() if n != AUTO)
        if auto:
            if devices % fixed:
                knob = next(a for a, n in sizes.items() if n not in (1, AUTO))
                raise MeshError(
                    f"{where}: fixed axes multiply to {fixed}, which does not divide {devices} devices; "
                    f"change {where}.{knob}"
                )
            sizes[auto[0]] = devices // fixed
        elif fixed != devices:
            knob = next((a for a, n in sizes.items() if n != 1), "fsdp")
            raise MeshError(
                f"{where}: axes multiply to {fixed} but there are {devices} devices; change {where}.{knob} "
                f"(or set one axis to -1)"
            )
        return sizes


class Parallelism(Recipe):
    """`ici` axes split the devices of one slice, `dcn` axes split the slices."""

    ici: MeshAxes = MeshAxes(fsdp=AUTO)
    dcn: MeshAxes = MeshAxes(data=AUTO)


class ResourceConfig(Recipe):
    accelerator: Literal["cpu", "gpu", "tpu"] = "cpu"
    tpu_type: str | None = None          # e.g. "v5litepod-16", "v4-32" (see tpu_catalog.TPU_TYPES)
    topology: str | None = None          # e.g. "4x4", "2x2x4"; filled from the catalog for TPUs
    gpu_type: str | None = None          # e.g. "h100-80gb" (see gpu_catalog.GPU_TYPES); required for GPUs
    num_slices: int = 1
    hosts_per_slice: int = 1             # processes per slice (pods on Kubernetes)
    chips_per_host: int = 1              # JAX devices per process (CPU: simulated host devices)
    memory_per_chip_gib: float | None = None
    cpu_cores: float | None = None       # for CPU runs / the launcher's pod request
    memory_gib: float | None = None
    parallelism: Parallelism = Parallelism()
    # Seconds between SIGTERM (a preempted or evicted pod, a node drain) and SIGKILL: the pods'
    # terminationGracePeriodSeconds; the trainer gives up its preemption checkpoint a margin earlier.
    preemption_grace_s: int = Field(default=300, ge=30)

    @model_validator(mode="before")
    @classmethod
    def _fill_from_catalog(cls, data):
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if data.get("accelerator") == "tpu":
            if not data.get("tpu_type"):
                raise ValueError("tpu_type is required when accelerator is 'tpu'")
            spec = tpu_spec(data["tpu_type"])
            for field, value in (
                ("topology", spec.topology),
                ("hosts_per_slice", spec.hosts),
                ("chips_per_host", spec.chips_per_host),
                ("memory_per_chip_gib", spec.hbm_gib_per_chip),
            ):
                given = data.get(field)
                if given is not None and given != value:
                    raise ValueError(f"{field}={given!r} contradicts tpu_type {spec.name} ({field}={value!r})")
                data[field] = value
        elif data.get("tpu_type"):
            raise ValueError(f"tpu_type is set but accelerator is {data.get('accelerator', 'cpu')!r}")
        if data.get("accelerator") == "gpu":
            data = _fill_gpu(data)
        elif data.get("gpu_type"):
            raise ValueError(f"gpu_type is set but accelerator is {data.get('accelerator', 'cpu')!r}")
        if data.get("memory_per_chip_gib") is None and data.get("memory_gib") is not None:
            data["memory_per_chip_gib"] = data["memory_gib"] / data.get("chips_per_host", 1)
        return data

    @model_validator(mode="after")
    def _positive(self):
        for field in ("num_slices", "hosts_per_slice", "chips_per_host"):
            if getattr(self, field) < 1:
                raise ValueError(f"{field} must be >= 1, got {getattr(self, field)}")
        return self

    @property
    def tpu(self) -> TpuSpec | None:
        return tpu_spec(self.tpu_type) if self.tpu_type else None

    @property
    def gpu(self) -> GpuSpec | None:
        return gpu_spec(self.gpu_type) if self.gpu_type else None

    @property
    def devices_per_slice(self) -> int:
        return self.hosts_per_slice * self.chips_per_host

    def num_devices(self) -> int:
        return self.num_slices * self.devices_per_slice

    @property
    def num_processes(self) -> int:
        return self.num_slices * self.hosts_per_slice

    @property
    def launcher(self) -> Literal["local", "kubernetes"]:
        return "local" if self.accelerator != "tpu" and self.num_processes == 1 else "kubernetes"

    @property
    def peak_tflops_per_device(self) -> float | None:
        if self.gpu:
            return self.gpu.peak_bf16_tflops
        return self.tpu.peak_bf16_tflops_per_chip if self.tpu else None

    def resolved_mesh(self) -> dict[str, dict[str, int]]:
        """Axis sizes with -1 resolved; raises MeshError naming the knob when they do not divide."""
        return {
            "ici": self.parallelism.ici.resolve(self.devices_per_slice, "parallelism.ici"),
            "dcn": self.parallelism.dcn.resolve(self.num_slices, "parallelism.dcn"),
        }

    def maxtext_parallelism_keys(self) -> dict[str, int]:
        mesh = self.resolved_mesh()
        keys = {f"{level}_{axis}_parallelism": n for level, sizes in mesh.items() for axis, n in sizes.items()}
        keys["num_slices"] = self.num_slices
        return keys

    def maxtext_hardware_keys(self) -> dict[str, object]:
        """Platform keys MaxText needs; the model recipe stays the same on every accelerator."""
        if self.accelerator == "cpu":
            return {
                "hardware": "cpu",
                # one process: no jax.distributed (it would read XPK env vars and fail without them)
                "skip_jax_distributed_system": self.num_processes == 1,
                "attention": "dot_product",
                "dtype": "float32",
            }
        if self.accelerator == "gpu":
            # As MaxText's configs/gpu/*: bf16 activations over float32 master weights (base.yml's
            # weight_dtype); dot_product attention, as cudnn_flash_te needs TransformerEngine.
            return {
                "hardware": "gpu" if self.num_processes == 1 else "gpu_multiprocess",
                "dtype": "bfloat16",
                "attention": "dot_product",
            }
        return {"hardware": "tpu", "dtype": "bfloat16"}

    def maxtext_preemption_keys(self) -> dict[str, object]:
        """Several hosts: MaxText's own preemption path, so every host checkpoints at the same step.

        JAX's preemption sync point (multihost_utils.reached_preemption_sync_point) answers the same on
        every host once any one got SIGTERM; MaxText then saves that step everywhere and stops.
        """
        return {"enable_autocheckpoint": True} if self.num_processes > 1 else {}

    @property
    def trainer_grace_s(self) -> int:
        """How long the trainer may take to checkpoint after SIGTERM: the pod's grace minus a margin to exit."""
        return self.preemption_grace_s - max(10, self.preemption_grace_s // 10)

    def process_env(self) -> dict[str, str]:
        """Environment every training process needs (on top of the launcher's own)."""
        # Not DECOUPLE_GCLOUD=TRUE: in MaxText 0.2.5 it also swaps tensorboardX for a no-op writer,
        # and the loss curve and final eval loss are read from TensorBoard events.
        env: dict[str, str] = {"MARIN_PREEMPT_GRACE_S": str(self.trainer_grace_s)}
        if self.accelerator == "cpu":
            env["JAX_PLATFORMS"] = "cpu"
            if self.chips_per_host > 1:
                env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={self.chips_per_host}"
        if self.accelerator == "gpu":
            env.update(gpu_process_env(self.chips_per_host))
        return env


# XLA flags of MaxText's own GPU scripts (inference/mlperf/gpu): overlap collectives with compute.
GPU_XLA_FLAGS = "--xla_gpu_enable_latency_hiding_scheduler=true"
GPU_MEMORY_FRACTION = 0.9  # XLA's preallocation; preflight's USABLE_MEMORY_FRACTION matches it


def gpu_process_env(gpus: int) -> dict[str, str]:
    """One process over the first `gpus` local GPUs, CUDA only (never a silent fall back to CPU)."""
    return {
        "JAX_PLATFORMS": "cuda",
        "JAX_CUDA_VISIBLE_DEVICES": ",".join(str(i) for i in range(gpus)),
        "XLA_FLAGS": GPU_XLA_FLAGS,
        "XLA_PYTHON_CLIENT_MEM_FRACTION": str(GPU_MEMORY_FRACTION),
    }


def _fill_gpu(data: dict) -> dict:
    if not data.get("gpu_type"):
        raise ValueError("gpu_type is required when accelerator is 'gpu' (e.g. h100-80gb); see train/gpu_catalog.py")
    spec = gpu_spec(data["gpu_type"])
    chips = data.get("chips_per_host", 1)
    if isinstance(chips, int) and chips > spec.gpus_per_node:
        raise ValueError(f"chips_per_host={chips} exceeds the {spec.gpus_per_node} GPUs of a {spec.machine_type} "
                         f"node ({spec.name}); lower chips_per_host or raise hosts_per_slice")
    given = data.get("memory_per_chip_gib")
    if given is not None and abs(given - spec.memory_gib) > 1e-6:
        raise ValueError(f"memory_per_chip_gib={given!r} contradicts gpu_type {spec.name} ({spec.memory_gib:.2f} GiB)")
    return {**data, "memory_per_chip_gib": spec.memory_gib}
