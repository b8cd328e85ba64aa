"""Model recipes: a decoder-only LM's shape, batch, LR schedule and default budget (recipes/models/*.yaml).

A recipe says nothing about hardware: the global batch is fixed and MaxText's per-device batch is
derived from the ResourceConfig, so the same recipe trains on a laptop CPU or a TPU pod. Each field
maps to one MaxText key (see `maxtext_config.model_keys`); the architecture section is a
registered kind (train/architectures/: llama2 by default, qwen3, mixtral MoE).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

from pydantic import Field, model_serializer, model_validator

from marin_assets.core.recipes import Recipe, RecipeError, load_recipe, recipes_dir
from marin_assets.train.architectures import Architecture

MODELS_DIR = "models"
VOCAB_MULTIPLE = 128  # MaxText/TPU-friendly padding of the embedding table
Quantization = Literal["none", "int8", "fp8"]


class Optimizer(Recipe):
    learning_rate: float = Field(gt=0)
    schedule: Literal["cosine", "wsd"] = "cosine"       # lr_schedule_type
    warmup_fraction: float = Field(default=0.1, ge=0, le=1)
    final_lr_fraction: float = Field(default=0.1, ge=0, le=1)
    weight_decay: float = Field(default=0.1, ge=0)      # adam_weight_decay
    adam_b1: float = 0.9
    adam_b2: float = 0.95
    grad_clip: float = Field(default=1.0, ge=0)         # gradient_clipping_threshold (0 = off)


class Budget(Recipe):
    """Train for a number of steps or a number of tokens (rounded up to whole steps)."""

    steps: int | None = Field(default=None, gt=0)
    tokens: int | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _exactly_one(self):
        if (self.steps is None) == (self.tokens is None):
            raise ValueError("set exactly one of budget.steps or budget.tokens")
        return self

    def resolve_steps(self, tokens_per_step: int) -> int:
        return self.steps if self.steps is not None else math.ceil(self.tokens / tokens_per_step)


class ModelRecipe(Recipe):
    name: str
    architecture: Architecture
    seq_len: int = Field(gt=0)                    # max_target_length
    global_batch_size: int = Field(gt=0)          # sequences per step over all devices
    optimizer: Optimizer
    budget: Budget
    remat_policy: Literal["full", "minimal", "save_qkv_proj", "save_out_proj", "save_dot_except_mlp", "minimal_offloaded", "none"] = "full"
    seed: int = 0                                 # init_weights_seed and data_shuffle_seed
    quantization: Quantization = "none"           # MaxText `quantization` (AQT); a run may override it

    @model_serializer(mode="wrap")
    def _unquantized_unsaid(self, handler):
        # Recipes without quantization hash as before the switch existed; any other value is hashed.
        out = handler(self)
        if out.get("quantization") == "none":
            del out["quantization"]
        return out

    @property
    def tokens_per_step(self) -> int:
        return self.global_batch_size * self.seq_len

    def vocab_size_for(self, tokenizer_vocab_size: int) -> int:
        """Embedding rows: the recipe's vocab, else the tokenizer's rounded up; never fewer than the tokenizer's."""
        vocab = self.architecture.vocab_size or math.ceil(tokenizer_vocab_size / VOCAB_MULTIPLE) * VOCAB_MULTIPLE
        if vocab < tokenizer_vocab_size:
            raise ValueError(
                f"model {self.name}: architecture.vocab_size={vocab} is smaller than the tokenizer's "
                f"{tokenizer_vocab_size} tokens; raise it or leave it unset"
            )
        return vocab


def model_recipe_path(name: str) -> Path:
    return recipes_dir() / MODELS_DIR / f"{name}.yaml"


def load_model_recipe(name: str) -> ModelRecipe:
    recipe = load_recipe(model_recipe_path(name), ModelRecipe)
    if recipe.name != name:
        raise RecipeError(f"{model_recipe_path(name)}: name {recipe.name!r} does not match the file name {name!r}")
    return recipe


def list_model_recipes() -> list[str]:
    return sorted(p.stem for p in (recipes_dir() / MODELS_DIR).glob("*.yaml"))
