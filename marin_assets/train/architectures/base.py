"""What every registered decoder architecture is: recipe fields -> MaxText keys, parameters, FLOPs, mesh rules.

An architecture is a recipe section (`architecture: {kind: <name>, ...}` in a model recipe) whose
class is registered under `kind` in ARCHITECTURES. The dense counting here reproduces MaxText's
`calculate_tflops_training_per_device` and the parameter pytree of its llama2-style blocks; a
subclass adds what its block adds (QK-norm, experts). The tests compare each against MaxText.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import Field, model_serializer, model_validator

from marin_assets.core.recipes import Recipe
from marin_assets.core.registries import Registry

ARCHITECTURES = Registry("architecture kind", package="marin_assets.train.architectures")
register = ARCHITECTURES.register

DEFAULT_KIND = "llama2"
MLP_MATRICES = 2  # MaxText mlp_activations ["silu", "linear"]: wi_0 and wi_1 (plus wo)


@dataclass(frozen=True)
class StepFlops:
    """Model FLOPs of one training step on one device (forward + backward, remat not counted)."""

    learnable_weight: float
    attention: float

    @property
    def total(self) -> float:
        return self.learnable_weight + self.attention


class DecoderArchitecture(Recipe):
    """A llama2-style pre-norm decoder: GQA attention, SwiGLU MLP, untied input/output embeddings."""

    decoder_block: ClassVar[str] = "llama2"
    is_moe: ClassVar[bool] = False  # routes tokens to experts (MaxText logs learning/moe_lb_loss)

    kind: str = DEFAULT_KIND
    emb_dim: int = Field(gt=0)            # base_emb_dim
    num_layers: int = Field(gt=0)         # base_num_decoder_layers
    num_query_heads: int = Field(gt=0)    # base_num_query_heads
    num_kv_heads: int = Field(gt=0)       # base_num_kv_heads
    head_dim: int = Field(gt=0)           # head_dim
    mlp_dim: int = Field(gt=0)            # base_mlp_dim
    vocab_size: int | None = Field(default=None, gt=0)  # None: the tokenizer's vocab, rounded up to 128

    @model_validator(mode="after")
    def _heads_group(self):
        if self.num_query_heads % self.num_kv_heads:
            raise ValueError(
                f"num_query_heads={self.num_query_heads} must be a multiple of num_kv_heads={self.num_kv_heads}"
            )
        return self

    @model_serializer(mode="wrap")
    def _default_kind_unsaid(self, handler):
        # A recipe naming no kind hashes as before architectures existed (run specs keep their versions).
        out = handler(self)
        if out.get("kind") == DEFAULT_KIND:
            del out["kind"]
        return out

    # --- MaxText keys ---------------------------------------------------------------------------
    def maxtext_keys(self, accelerator: str) -> dict[str, Any]:
        """The model-shape keys of the MaxText config (the platform decides kernels, not the recipe)."""
        return {
            "model_name": "default",
            "decoder_block": self.decoder_block,
            "base_emb_dim": self.emb_dim,
            "base_num_decoder_layers": self.num_layers,
            "base_num_query_heads": self.num_query_heads,
            "base_num_kv_heads": self.num_kv_heads,
            "head_dim": self.head_dim,
            "base_mlp_dim": self.mlp_dim,
        }

    # --- parameters -----------------------------------------------------------------------------
    def attention_params(self) -> int:
        return self.emb_dim * self.head_dim * (2 * self.num_query_heads + 2 * self.num_kv_heads)

    def ffn_params(self, *, active: bool) -> int:
        """One layer's feed-forward parameters (all experts, or those a token uses when active=True)."""
        return (MLP_MATRICES + 1) * self.emb_dim * self.mlp_dim

    def layer_params(self, *, active: bool = False) -> int:
        norms = 2 * self.emb_dim
        return self.attention_params() + self.ffn_params(active=active) + norms

    def count_params(self, vocab_size: int) -> int:
        """Every parameter MaxText initializes (all experts resident): what memory must hold."""
        return self.num_layers * self.layer_params() + 2 * vocab_size * self.emb_dim + self.emb_dim

    def active_params(self, vocab_size: int) -> int:
        """Parameters one token passes through (= count_params for a dense block)."""
        return self.num_layers * self.layer_params(active=True) + 2 * vocab_size * self.emb_dim + self.emb_dim

    # --- FLOPs (MaxText's calculate_tflops_training_per_device, in FLOPs) -------------------------
    def ffn_flops(self, tokens: float) -> float:
        """Forward FLOPs of one layer's feed-forward block for `tokens` tokens."""
        return 2 * tokens * self.mlp_dim * self.emb_dim * (MLP_MATRICES + 1)

    def flops_per_device_step(self, vocab_size: int, seq_len: int, per_device_batch: float) -> StepFlops:
        bl = per_device_batch * seq_len
        d, hd, hq, hkv = self.emb_dim, self.head_dim, self.num_query_heads, self.num_kv_heads
        qkv = 2 * bl * d * (hq + 2 * hkv) * hd
        projection = 2 * bl * d * hq * hd
        causal_attention = 4 * per_device_batch * seq_len**2 * hq * hd / 2
        unembedding = 2 * bl * d * vocab_size
        weights = (self.ffn_flops(bl) * self.num_layers + (qkv + projection) * self.num_layers + unembedding) * 3
        return StepFlops(learnable_weight=weights, attention=causal_attention * self.num_layers * 3)

    # --- activations (preflight's memory model) ---------------------------------------------------
    def ffn_hidden_per_token(self, accelerator: str, seq_len: int) -> float:
        """Elements of one FFN hidden activation (width mlp_dim) per token: one copy for a dense block."""
        return float(self.mlp_dim)

    def routing_per_token(self, accelerator: str, seq_len: int) -> float:
        """Elements per token a routed block adds beyond its hidden activations (copies, router, masks): none here."""
        return 0.0

    # --- mesh -----------------------------------------------------------------------------------
    def mesh_problems(self, mesh: dict[str, dict[str, int]]) -> list[str]:
        """Block-specific mesh rules (the shared ones live in preflight.mesh_problems)."""
        return []

    def describe(self) -> dict[str, Any]:
        """What the run's metadata shows about the architecture."""
        return {"kind": self.kind, "decoder_block": self.decoder_block}
