"""mixtral: a mixture-of-experts block (llama2 attention, top-k routed SwiGLU experts), MaxText `decoder_block: mixtral`.

Every layer is MoE (MaxText requires base_mlp_dim == base_moe_mlp_dim then), so `mlp_dim` is each
expert's width. Routing kernels are picked per platform, not per recipe: dense einsum routing on CPU
(`sparse_matmul: false`), ragged grouped matmuls on GPU (`sparse_matmul`) and megablox on TPU.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from marin_assets.train.architectures.base import DecoderArchitecture, register

# accelerator -> MaxText MoE kernel keys
MOE_KERNELS = {
    "cpu": {"sparse_matmul": False, "megablox": False},
    "gpu": {"sparse_matmul": True, "megablox": False},
    "tpu": {"sparse_matmul": True, "megablox": True},
}


@register("mixtral")
class Mixtral(DecoderArchitecture):
    """Top-k softmax routing over `num_experts` SwiGLU experts with MaxText's Switch-style load-balance loss."""

    decoder_block: ClassVar[str] = "mixtral"
    is_moe: ClassVar[bool] = True
    kind: Literal["mixtral"] = "mixtral"
    num_experts: int = Field(ge=2)                      # num_experts
    num_experts_per_tok: int = Field(ge=1)              # num_experts_per_tok (top-k)
    capacity_factor: float | None = Field(default=None, gt=0)  # None: dropless (capacity_factor -1)
    load_balance_loss_weight: float = Field(default=0.01, ge=0)  # load_balance_loss_weight
    shared_experts: int = Field(default=0, ge=0)        # MaxText's mixtral block has none (refused if > 0)
    max_expert_share: float = Field(default=0.5, gt=0, le=1)  # routing_balanced fails above it (collapse)

    @model_validator(mode="after")
    def _experts_consistent(self):
        if self.num_experts_per_tok > self.num_experts:
            raise ValueError(
                f"num_experts_per_tok={self.num_experts_per_tok} exceeds num_experts={self.num_experts}"
            )
        if self.max_expert_share * self.num_experts < 1:
            raise ValueError(f"max_expert_share={self.max_expert_share} is below an even share 1/{self.num_experts}: "
                             "every run would fail routing_balanced")
        if self.shared_experts:
            raise ValueError(
                f"shared_experts={self.shared_experts}: MaxText's mixtral decoder block routes every token to "
                "routed experts only (no shared expert); set shared_experts to 0"
            )
        return self

    def maxtext_keys(self, accelerator: str) -> dict[str, Any]:
        return {
            **super().maxtext_keys(accelerator),
            "num_experts": self.num_experts,
            "num_experts_per_tok": self.num_experts_per_tok,
            "base_moe_mlp_dim": self.mlp_dim,
            "capacity_factor": -1.0 if self.capacity_factor is None else self.capacity_factor,
            "load_balance_loss_weight": self.load_balance_loss_weight,
            **MOE_KERNELS[accelerator],
        }

    def ffn_params(self, *, active: bool) -> int:
        experts = self.num_experts_per_tok if active else self.num_experts
        gate = self.emb_dim * self.num_experts  # the router runs for every token
        return gate + experts * super().ffn_params(active=active)

    def ffn_flops(self, tokens: float) -> float:
        # MaxText: gate + k experts' SwiGLU ("calculation based on dropless implementation")
        gate = 2 * tokens * self.emb_dim * self.num_experts
        return gate + self.num_experts_per_tok * super().ffn_flops(tokens)

    # MaxText's MoE activations per token (layers/moe.py). Dense einsum routing (CPU, `dense_matmul`): dropless,
    # every expert runs on every token (BSEH hidden, BSEM outputs); with a capacity factor, each sequence's tokens
    # are dispatched into E x C slots (EBCM inputs and outputs, EBCH hidden) through B S E C dispatch and combine
    # masks and a B S E (C+1) one-hot of slot positions. Sparse routing (GPU/TPU): k sorted copies per token.
    def expert_capacity(self, seq_len: int) -> int:
        """MaxText's `expert_capacity_per_batch` (generate_masks): slots per expert per sequence."""
        cf = self.capacity_factor
        return int(max(math.ceil(seq_len * self.num_experts_per_tok / self.num_experts) * cf, cf))

    def routed_copies_per_token(self, accelerator: str, seq_len: int) -> float:
        """Expert inputs computed per token: all E (dense, dropless), E x C / S (dense, capacity) or k (sparse)."""
        if MOE_KERNELS[accelerator]["sparse_matmul"]:
            return float(self.num_experts_per_tok)
        if self.capacity_factor is None:
            return float(self.num_experts)
        return self.num_experts * self.expert_capacity(seq_len) / seq_len

    def ffn_hidden_per_token(self, accelerator: str, seq_len: int) -> float:
        return self.routed_copies_per_token(accelerator, seq_len) * self.mlp_dim

    def routing_per_token(self, accelerator: str, seq_len: int) -> float:
        copies = self.routed_copies_per_token(accelerator, seq_len)
        router = 3 * self.num_experts  # gate logits, softmax probabilities, combine weights
        outputs = copies * self.emb_dim  # each expert's output before the weighted combine
        if MOE_KERNELS[accelerator]["sparse_matmul"] or self.capacity_factor is None:
            # sparse: the k sorted input copies; dense dropless reads the tokens in place
            inputs = copies * self.emb_dim if MOE_KERNELS[accelerator]["sparse_matmul"] else 0.0
            return router + outputs + inputs
        slots = self.num_experts * self.expert_capacity(seq_len)
        masks = 3 * slots + self.num_experts  # dispatch, combine, slot one-hot (C+1 wide)
        return router + outputs + copies * self.emb_dim + masks

    def mesh_problems(self, mesh: dict[str, dict[str, int]]) -> list[str]:
        expert = mesh["ici"]["expert"] * mesh["dcn"]["expert"]
        if self.num_experts % expert:
            return [f"parallelism expert={expert} does not divide architecture.num_experts={self.num_experts}; "
                    f"change parallelism.ici.expert (or dcn.expert) or num_experts"]
        return []

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "num_experts": self.num_experts, "num_experts_per_tok": self.num_experts_per_tok,
                "capacity_factor": self.capacity_factor if self.capacity_factor is not None else "dropless",
                "load_balance_loss_weight": self.load_balance_loss_weight, "max_expert_share": self.max_expert_share}
