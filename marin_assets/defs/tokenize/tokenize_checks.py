"""Blocking guard on a mixture: one tokenizer throughout, and a model vocab large enough for it."""

import warnings

import dagster as dg

from marin_assets.core import layout
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.defs.tokenize.tokenize_assets import mixture_partitions
from marin_assets.tokenize.mixture_build import SPLITS
from marin_assets.tokenize.mixture_info import (
    TokenizerCompatibilityError, check_same_tokenizer, check_vocab_fits, load_mixture_info,
)
from marin_assets.tokenize.tokenize_recipe import load_mixture_recipe
from marin_assets.tokenize.shards import read_tokenizer_hash
from marin_assets.tokenize.tokenizer_files import tokenizer_hash


def tokenizer_compatible_fn(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
    st, name = storage.storage, context.partition_key
    info = load_mixture_info(st, name)
    recorded = {}
    for split in SPLITS:
        if st.exists(layout.MIXTURES, name, split):
            base = st.committed_uri(layout.MIXTURES, name, split)
            recorded[f"{name}/{split}"] = {rel: read_tokenizer_hash(f"{base}/{rel}")
                                           for rel in st.list_files(layout.MIXTURES, name, split)}
    problems = []
    try:
        check_same_tokenizer(recorded, info.tokenizer_hash)
    except TokenizerCompatibilityError as exc:
        problems.append(f"mixture {name!r} (sources {sorted(info.sources)}): {exc}")
    # The tokenizer folder training will load (local or gs://) must still be the one the ids came from.
    folder = _folder_hash(info.tokenizer_uri)
    if folder != info.tokenizer_hash:
        found = "lacks tokenizer files" if folder is None else f"now hashes to {folder[:12]}"
        problems.append(f"the tokenizer folder {info.tokenizer_uri} {found}, but the mixture was tokenized with "
                        f"{info.tokenizer_hash[:12]}; re-materialize tokenizer and everything downstream")
    model_vocab_size = load_mixture_recipe(name).model_vocab_size
    if model_vocab_size is not None:
        try:
            check_vocab_fits(info, model_vocab_size)
        except TokenizerCompatibilityError as exc:
            problems.append(str(exc))
    return dg.AssetCheckResult(
        passed=not problems, description="; ".join(problems) or "one tokenizer; vocab fits",
        metadata={"tokenizer_hash": info.tokenizer_hash, "tokenizer_vocab_size": info.tokenizer_vocab_size,
                  "model_vocab_size": model_vocab_size if model_vocab_size is not None else "not set",
                  "tokenizer_folder_hash": folder or "missing", "shards_checked": sum(len(v) for v in recorded.values())},
    )


def _folder_hash(uri: str) -> str | None:
    """The folder's tokenizer hash through fsspec (so gs:// works too); None when a file is missing."""
    try:
        return tokenizer_hash(uri)
    except FileNotFoundError:
        return None


def build_tokenize_checks() -> list:
    """tokenizer_compatible on every mixture partition."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)  # partitioned asset checks are "preview" in dagster 1.13
        return [dg.asset_check(
            asset="mixture", name="tokenizer_compatible", blocking=True, partitions_def=mixture_partitions(),
            description="Every shard and the tokenizer folder carry mixture.json's tokenizer hash, and the "
                        "tokenizer fits the recipe's model_vocab_size.",
        )(tokenizer_compatible_fn)]
