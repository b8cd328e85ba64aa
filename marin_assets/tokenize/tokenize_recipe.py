"""Recipe models of the tokenize stage: recipes/tokenizer.yaml and recipes/mixtures/<name>.yaml."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import Field, PositiveInt, model_validator

from marin_assets.core.recipes import Recipe, load_recipe, recipes_dir

TOKENIZER_RECIPE = "tokenizer.yaml"
MIXTURES_DIR = "mixtures"
WEIGHT_TOLERANCE = 1e-6


class SpecialTokens(Recipe):
    pad: str = "<pad>"
    bos: str = "<s>"
    eos: str = "</s>"

    def ordered(self) -> list[str]:
        """Special tokens get the first ids, in this order: pad=0, bos=1, eos=2."""
        return [self.pad, self.bos, self.eos]


class TokenizerKind(StrEnum):
    TRAIN = "train"    # byte-level BPE trained on the cleaned corpus
    IMPORT = "import"  # an existing local tokenizer.json


class TokenizerSpec(Recipe):
    name: str = Field(description="Folder name under tokenizer/; also names the tokenizer in metadata")
    kind: TokenizerKind = TokenizerKind.TRAIN
    import_path: str | None = Field(default=None, description="Local tokenizer.json to import (kind: import)")
    vocab_size: PositiveInt = 1024
    min_frequency: PositiveInt = 2
    special_tokens: SpecialTokens = SpecialTokens()
    seed: int = Field(default=0, description="Seeds the choice of training documents when training_fraction < 1")
    training_fraction: float = Field(default=1.0, gt=0, le=1, description="Share of documents used to train")
    sources: list[str] | None = Field(default=None, description="Sources to train on; default: all registered")
    sample_texts: list[str] = Field(default_factory=lambda: ["Hello, world!"], description="Encoded into metadata")

    @model_validator(mode="after")
    def _import_needs_path(self) -> TokenizerSpec:
        if self.kind == TokenizerKind.IMPORT and not self.import_path:
            raise ValueError("kind 'import' needs import_path (a local tokenizer.json)")
        if self.kind == TokenizerKind.TRAIN and self.vocab_size < 256 + 3:
            raise ValueError("a byte-level BPE needs vocab_size >= 259 (256 bytes + 3 special tokens)")
        return self


class TokenizationSpec(Recipe):
    """How documents become token ids (the tokenized_source asset)."""

    add_bos: bool = True
    add_eos: bool = True
    documents_per_shard: PositiveInt = 20_000
    encode_batch_documents: PositiveInt = 1_000


class TokenizerRecipe(Recipe):
    tokenizer: TokenizerSpec
    tokenization: TokenizationSpec = TokenizationSpec()


class InsufficientTokens(StrEnum):
    UPSAMPLE = "upsample"  # repeat the source's documents; the epoch count is recorded per source
    FAIL = "fail"


class MixtureRecipe(Recipe):
    weights: dict[str, float] = Field(description="Per-source share of the training tokens; must sum to 1")
    train_tokens: PositiveInt | None = Field(default=None, description="Total training tokens")
    epochs: float | None = Field(
        default=None, gt=0,
        description="Instead of train_tokens: the largest mixture in which no source repeats more than this",
    )
    seed: int = 0
    validation_fraction: float = Field(default=0.05, ge=0, lt=1)
    seq_len: PositiveInt = 128
    on_insufficient_tokens: InsufficientTokens = InsufficientTokens.UPSAMPLE
    max_epochs: float = Field(default=100.0, gt=0, description="Upsampling beyond this fails (a typo guard)")
    documents_per_shard: PositiveInt = 50_000
    plan_memory_documents: PositiveInt = Field(
        default=1_000_000,
        description="Documents whose plan entries the mixture planner and writer hold in memory at once "
                    "(a few tens of bytes each); larger corpora take more passes over local spill files",
    )
    model_vocab_size: PositiveInt | None = Field(
        default=None, description="vocab_size of the models meant to train on this mixture (checked)"
    )

    @model_validator(mode="after")
    def _valid(self) -> MixtureRecipe:
        if (self.train_tokens is None) == (self.epochs is None):
            raise ValueError("set exactly one of train_tokens or epochs")
        if not self.weights:
            raise ValueError("weights: at least one source is needed")
        bad = sorted(name for name, w in self.weights.items() if not w > 0)
        if bad:
            raise ValueError(f"weights must be > 0 (remove a source to exclude it): {bad}")
        total = sum(self.weights.values())
        if abs(total - 1.0) > WEIGHT_TOLERANCE:
            raise ValueError(f"weights sum to {total:.6g}, not 1 (they are not normalised for you)")
        return self


def load_tokenizer_recipe(path: str | Path = TOKENIZER_RECIPE) -> TokenizerRecipe:
    return load_recipe(path, TokenizerRecipe)


def mixture_names(directory: Path | None = None) -> list[str]:
    directory = directory or recipes_dir() / MIXTURES_DIR
    return sorted(p.stem for p in directory.glob("*.yaml"))


def load_mixture_recipe(name: str, directory: Path | None = None) -> MixtureRecipe:
    directory = directory or recipes_dir() / MIXTURES_DIR
    return load_recipe(directory / f"{name}.yaml", MixtureRecipe)
