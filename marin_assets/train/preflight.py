"""Preflight: what a run will cost and whether it fits, before any device is touched.

Pure functions. Parameter count and training FLOPs come from the registered architecture and
reproduce MaxText's own numbers (`calculate_tflops_training_per_device`, the parameter pytree) for
each block; the tests compare them against a real MaxText config. An MoE block's memory holds all
experts; its FLOPs count the top-k experts a token uses. Memory per device is an estimate: weights + gradients + AdamW
moments (sharded over the weight-sharding mesh axes) plus activations saved under the remat policy,
one layer's recompute working set and the logits.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from marin_assets.train.architectures import Architecture, StepFlops
from marin_assets.train.architectures.base import MLP_MATRICES
from marin_assets.train.models import ModelRecipe
from marin_assets.train.hardware import MeshError, ResourceConfig

GIB = 1024**3
USABLE_MEMORY_FRACTION = 0.9  # headroom for XLA temporaries and fragmentation
WEIGHT_BYTES = 4              # MaxText weight_dtype float32 (params, grads, Adam mu and nu)


class PreflightError(ValueError):
    """The run cannot start; the message names the knob to change."""


# --- parameter and FLOP counting: delegated to the registered architecture (train/architectures/) ---
def count_params(arch: Architecture, vocab_size: int) -> int:
    """Every parameter MaxText initializes for the block, all experts included, untied embeddings."""
    return arch.count_params(vocab_size)


def active_params(arch: Architecture, vocab_size: int) -> int:
    """Parameters one token passes through (top-k experts of an MoE block; all of a dense one)."""
    return arch.active_params(vocab_size)


def flops_per_device_step(arch: Architecture, vocab_size: int, seq_len: int, per_device_batch: float) -> StepFlops:
    """MaxText's `calculate_tflops_training_per_device` for the architecture, in FLOPs."""
    return arch.flops_per_device_step(vocab_size, seq_len, per_device_batch)
# --- end of counting ---


def _saved_per_token_per_layer(arch: Architecture, remat_policy: str, seq_len: int, accelerator: str = "cpu") -> float:
    """Activation elements kept per token per layer between forward and backward.

    An MoE block's FFN holds its routed copies (all experts on CPU's dense routing when dropless, the
    capacity's slots with a capacity factor, top-k on GPU/TPU) plus its router and masks (architectures/)."""
    d, hd = arch.emb_dim, arch.head_dim
    qkv = (arch.num_query_heads + 2 * arch.num_kv_heads) * hd
    hidden = arch.ffn_hidden_per_token(accelerator, seq_len)  # mlp_dim for a dense block
    routing = arch.routing_per_token(accelerator, seq_len)    # 0 for a dense block
    everything = 17 * d + 2.5 * arch.num_query_heads * seq_len + MLP_MATRICES * hidden + routing  # ~Korthikanti et al.
    return {
        "full": d,
        "minimal_offloaded": d,
        "save_qkv_proj": d + qkv,
        "save_out_proj": d + d,
        "save_dot_except_mlp": d + qkv + d,
        "minimal": d + qkv + d + (MLP_MATRICES + 1) * hidden + routing,
        "none": everything,
    }[remat_policy]


@dataclass(frozen=True)
class MemoryEstimate:
    weights_bytes: float
    gradients_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    available_bytes: float | None

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.gradients_bytes + self.optimizer_bytes + self.activations_bytes


def weight_shards(mesh: dict[str, dict[str, int]]) -> int:
    """Devices one weight is split over (MaxText shards `embed`/`mlp`/`heads` over these axes)."""
    ici, dcn = mesh["ici"], mesh["dcn"]
    axes = ("fsdp", "fsdp_transpose", "sequence", "context", "tensor", "tensor_sequence", "pipeline", "expert")
    return math.prod(ici[a] for a in axes) * dcn["fsdp"] * dcn["pipeline"]


def memory_per_device(
    model: ModelRecipe, resources: ResourceConfig, vocab_size: int, activation_bytes: int
) -> MemoryEstimate:
    mesh = resources.resolved_mesh()
    n = count_params(model.architecture, vocab_size)
    shards = weight_shards(mesh)
    arch = model.architecture
    tokens = model.global_batch_size * model.seq_len / resources.num_devices()
    saved = _saved_per_token_per_layer(arch, model.remat_policy, model.seq_len, resources.accelerator) * arch.num_layers
    working_layer = _saved_per_token_per_layer(arch, "none", model.seq_len, resources.accelerator)
    logits = 2 * vocab_size * 4 / activation_bytes  # f32 logits and their gradient
    available = resources.memory_per_chip_gib * GIB if resources.memory_per_chip_gib else None
    return MemoryEstimate(
        weights_bytes=n * WEIGHT_BYTES / shards,
        gradients_bytes=n * WEIGHT_BYTES / shards,
        optimizer_bytes=2 * n * WEIGHT_BYTES / shards,
        activations_bytes=tokens * (saved + working_layer + logits) * activation_bytes,
        available_bytes=available,
    )


@dataclass(frozen=True)
class PreflightReport:
    num_params: int
    active_params: int
    vocab_size: int
    steps: int
    num_devices: int
    per_device_batch_size: float
    tokens_per_step: int
    flops_per_device_step: float
    flops_per_step: float
    flops_per_token: float
    total_flops: float
    memory: MemoryEstimate | None
    problems: list[str] = field(default_factory=list)

    @property
    def fits(self) -> bool:
        return not self.problems

    def to_json(self) -> dict:
        out = asdict(self)
        if self.memory is not None:
            out["memory"]["total_bytes"] = self.memory.total_bytes
        return out


def mesh_problems(model: ModelRecipe, resources: ResourceConfig) -> list[str]:
    try:
        mesh = resources.resolved_mesh()
    except MeshError as exc:
        return [str(exc)]
    ici, dcn = mesh["ici"], mesh["dcn"]
    arch, problems = model.architecture, []
    batch_shards = math.prod(ici[a] * dcn[a] for a in ("data", "fsdp", "fsdp_transpose", "expert"))
    if model.global_batch_size % batch_shards:
        problems.append(
            f"global_batch_size={model.global_batch_size} does not split over {batch_shards} batch shards "
            f"(data x fsdp x fsdp_transpose x expert); change the model recipe's global_batch_size or parallelism.ici.fsdp"
        )
    tensor = ici["tensor"] * dcn["tensor"]
    if arch.num_query_heads % tensor or arch.num_kv_heads % tensor:
        problems.append(
            f"tensor parallelism {tensor} does not divide num_query_heads={arch.num_query_heads} and "
            f"num_kv_heads={arch.num_kv_heads}; change parallelism.ici.tensor"
        )
    seq_shards = ici["sequence"] * ici["context"] * dcn["sequence"] * dcn["context"]
    if model.seq_len % seq_shards:
        problems.append(f"seq_len={model.seq_len} is not divisible by sequence x context = {seq_shards}; change parallelism.ici.context")
    stages = ici["pipeline"] * dcn["pipeline"]
    if arch.num_layers % stages:
        problems.append(f"num_layers={arch.num_layers} is not divisible by {stages} pipeline stages; change parallelism.ici.pipeline")
    return problems + arch.mesh_problems(mesh)


def preflight(model: ModelRecipe, resources: ResourceConfig, tokenizer_vocab_size: int, steps: int) -> PreflightReport:
    vocab = model.vocab_size_for(tokenizer_vocab_size)
    problems = mesh_problems(model, resources)
    devices = resources.num_devices()
    per_device_batch = model.global_batch_size / devices
    flops = flops_per_device_step(model.architecture, vocab, model.seq_len, per_device_batch).total
    memory = None
    if not problems:
        act_bytes = 4 if resources.maxtext_hardware_keys()["dtype"] == "float32" else 2
        memory = memory_per_device(model, resources, vocab, act_bytes)
        if memory.available_bytes and memory.total_bytes > USABLE_MEMORY_FRACTION * memory.available_bytes:
            problems.append(
                f"needs ~{memory.total_bytes / GIB:.2f} GiB per device but {USABLE_MEMORY_FRACTION:.0%} of "
                f"{memory.available_bytes / GIB:.2f} GiB is usable; lower global_batch_size, use remat_policy=full, "
                f"raise parallelism.ici.fsdp or pick a larger {'gpu_type' if resources.gpu_type else 'tpu_type'}"
            )
    return PreflightReport(
        num_params=count_params(model.architecture, vocab),
        active_params=active_params(model.architecture, vocab),
        vocab_size=vocab,
        steps=steps,
        num_devices=devices,
        per_device_batch_size=per_device_batch,
        tokens_per_step=model.tokens_per_step,
        flops_per_device_step=flops,
        flops_per_step=flops * devices,
        flops_per_token=flops * devices / model.tokens_per_step,
        total_flops=flops * devices * steps,
        memory=memory,
        problems=problems,
    )


def require_fits(report: PreflightReport) -> None:
    if not report.fits:
        raise PreflightError("preflight refused the run: " + "; ".join(report.problems))


@dataclass(frozen=True)
class ProfileEstimate:
    measured_steps: int
    median_step_s: float
    estimated_wall_s: float
    estimated_chip_hours: float


def extrapolate(step_seconds: list[float], steps: int, num_devices: int) -> ProfileEstimate:
    """Wall time and chip-hours for `steps` from measured step times (the first, compiling step is dropped)."""
    timed = sorted(step_seconds[1:] or step_seconds)
    if not timed:
        raise ValueError("no step times were measured")
    median = timed[len(timed) // 2]
    wall = median * steps
    return ProfileEstimate(len(step_seconds), median, wall, wall * num_devices / 3600)
