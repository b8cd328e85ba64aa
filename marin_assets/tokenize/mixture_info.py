"""The contract the training stage reads: mixtures/<name>/mixture.json, plus the compatibility guards.

`load_mixture_info` and `check_vocab_fits` are pure (no Dagster): training imports them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from marin_assets.core import layout
from marin_assets.core.storage import Storage

MIXTURE_FILE = "mixture.json"


class TokenizerCompatibilityError(ValueError):
    pass


class SourceInfo(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    target_weight: float
    realised_weight: float
    epochs: float
    train_tokens: int
    validation_tokens: int
    train_documents: int = 0
    validation_documents: int = 0
    available_train_tokens: int = 0


class MixtureInfo(BaseModel):
    """Fields training relies on; extra fields in the file are ignored, so the file may grow."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str
    train_glob: str
    validation_glob: str | None  # None when validation_fraction is 0
    tokenizer_uri: str
    tokenizer_hash: str
    tokenizer_vocab_size: int
    seq_len: int
    train_tokens: int
    validation_tokens: int
    sources: dict[str, SourceInfo]
    pad_id: int
    bos_id: int
    eos_id: int
    maxtext_args: dict[str, str | int | bool | list[str]] = {}
    warnings: list[str] = []


def load_mixture_info(storage: Storage, name: str) -> MixtureInfo:
    storage.require_committed(layout.MIXTURES, name)
    return MixtureInfo.model_validate(storage.read_json(layout.MIXTURES, name, MIXTURE_FILE))


def check_vocab_fits(info: MixtureInfo, model_vocab_size: int) -> None:
    """Refuse a model whose embedding table is smaller than the mixture's tokenizer vocabulary."""
    if info.tokenizer_vocab_size > model_vocab_size:
        raise TokenizerCompatibilityError(
            f"mixture {info.name!r} (sources {sorted(info.sources)}) uses a tokenizer with "
            f"{info.tokenizer_vocab_size} ids but the model's vocab_size is {model_vocab_size}; "
            f"set vocab_size >= {info.tokenizer_vocab_size}"
        )


def check_same_tokenizer(shard_hashes: dict[str, dict[str, str | None]], expected_hash: str) -> None:
    """shard_hashes maps source -> {shard: recorded tokenizer hash}; every one must equal expected_hash."""
    stale = {}
    for source, shards in sorted(shard_hashes.items()):
        found = sorted({h or "<none recorded>" for h in shards.values()} - {expected_hash})
        if found:
            stale[source] = [h[:12] for h in found]
    if stale:
        raise TokenizerCompatibilityError(
            f"sources {sorted(stale)} were tokenized with a different tokenizer ({stale}) than "
            f"{expected_hash[:12]}; re-materialize tokenized_source for those partitions"
        )
