"""Build a mixture: plan (mixture_plan) from ids + lengths, stream train/validation shards (mixture_stream), mixture.json.

Nothing with one entry a document is held whole: each source's ids are read row group by row group into a
local index file (a hash and a length a document, mixture_keys), the planner reads it in chunks of
recipe.plan_memory_documents and keeps a cut per source, the split order is an external sort on local
disk (mixture_order) and the writer an external shuffle reading each input row group once (mixture_stream,
mixture_shuffle). Driver memory is bounded by the setting and a row group, whatever the corpus size; local
disk holds about 16 bytes a document and 40 a written row, plus the split's tokens spilled twice.
"""

from __future__ import annotations

import os
import posixpath
import tempfile

from marin_assets.core import layout
from marin_assets.core.hashing import combine_hashes, hash_json
from marin_assets.core.storage import StagedOutput, Storage, file_hashes
from marin_assets.tokenize.mixture_info import MIXTURE_FILE, check_same_tokenizer
from marin_assets.tokenize.mixture_plan import MixturePlan, check_sources_known, plan_mixture
from marin_assets.tokenize.mixture_order import order_train, order_validation
from marin_assets.tokenize.mixture_stream import index_source, write_ordered
from marin_assets.tokenize.tokenize_recipe import MixtureRecipe
from marin_assets.tokenize.shards import read_tokenizer_hash
from marin_assets.tokenize.tokenize_job import STATS_FILE
from marin_assets.tokenize.tokenizer_files import TokenizerSummary

SPLITS = ("train", "validation")
URI_FIELDS = ("train_glob", "validation_glob", "tokenizer_uri", "maxtext_args")


def tokenized_shards(storage: Storage, source: str) -> list[str]:
    base = storage.require_committed(layout.TOKENIZED, source)
    return [f"{base}/{r}" for r in storage.list_files(layout.TOKENIZED, source)
            if r.startswith("shard-") and r.endswith(".parquet")]


def source_shards(storage: Storage, names: list[str], tokenizer_hash: str) -> dict[str, list[str]]:
    """Each source's token shards, after checking every shard came from `tokenizer_hash` (footers only)."""
    shard_hashes, shards = {}, {}
    for name in names:
        shards[name] = tokenized_shards(storage, name)
        recorded = {posixpath.basename(s): read_tokenizer_hash(s) for s in shards[name]}
        recorded[STATS_FILE] = storage.read_json(layout.TOKENIZED, name, STATS_FILE).get("tokenizer_hash")
        shard_hashes[name] = recorded
    check_same_tokenizer(shard_hashes, tokenizer_hash)
    return shards


def build_mixture(storage: Storage, name: str, recipe: MixtureRecipe, tokenizer: TokenizerSummary,
                  tokenizer_uri: str, known_sources: list[str], staged: StagedOutput) -> tuple[dict, MixturePlan]:
    check_sources_known(recipe, known_sources)
    names = sorted(recipe.weights)
    shards = source_shards(storage, names, tokenizer.hash)
    folders = {split: staged.join(split) for split in SPLITS}
    plan = write_mixture(recipe, [shards[n] for n in names], names, known_sources, folders, tokenizer.hash,
                         staged.storage.fs)  # fmt: skip
    info = mixture_info_dict(name, recipe, plan, tokenizer, tokenizer_uri, staged.final_uri)
    staged.write_json(info, MIXTURE_FILE)
    return info, plan


def write_mixture(recipe: MixtureRecipe, shards: list[list[str]], names: list[str], known_sources: list[str],
                  folders: dict[str, str], tokenizer_hash: str, fs) -> MixturePlan:
    """Plan the mixture of the sources `names` (sorted, with their token shards) and write its train and
    validation shards under folders[split]; local work files live in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="marin-mixture-") as work:
        documents = [index_source(n, paths, os.path.join(work, f"source-{i}.bin"))
                     for i, (n, paths) in enumerate(zip(names, shards, strict=True))]
        plan = plan_mixture(recipe, documents, known_sources)
        counts = {"train": order_train(plan, documents, os.path.join(work, "train.bin"), work),
                  "validation": order_validation(plan, documents, os.path.join(work, "validation.bin"))}
        for split in SPLITS:
            if counts[split] or split == "train":
                write_ordered(os.path.join(work, f"{split}.bin"), counts[split], shards, folders[split],
                              recipe.documents_per_shard, tokenizer_hash, fs, split == "train",
                              recipe.plan_memory_documents)  # fmt: skip
    return plan


def mixture_info_dict(name: str, recipe: MixtureRecipe, plan: MixturePlan, tokenizer: TokenizerSummary,
                      tokenizer_uri: str, final_uri: str) -> dict:
    train_glob = f"{final_uri}/train/shard-*.parquet"
    validation_glob = f"{final_uri}/validation/shard-*.parquet" if plan.validation_documents else None
    return {
        "name": name,
        "train_glob": train_glob,
        "validation_glob": validation_glob,
        "tokenizer_uri": tokenizer_uri,
        "tokenizer_hash": tokenizer.hash,
        "tokenizer_vocab_size": tokenizer.vocab_size,
        "pad_id": tokenizer.pad_id,
        "bos_id": tokenizer.bos_id,
        "eos_id": tokenizer.eos_id,
        "seq_len": recipe.seq_len,
        "seed": recipe.seed,
        "validation_fraction": recipe.validation_fraction,
        "train_tokens": plan.train_tokens,
        "validation_tokens": plan.validation_tokens,
        "train_documents": plan.train_documents,
        "validation_documents": plan.validation_documents,
        "train_sequences": plan.train_tokens // recipe.seq_len,
        "max_document_tokens": plan.max_document_tokens,
        "sources": {n: {k: v for k, v in p.__dict__.items() if k != "name"} for n, p in plan.sources.items()},
        "warnings": plan.warnings,
        "maxtext_args": {
            "dataset_type": "grain", "grain_file_type": "parquet",
            "grain_train_files": train_glob, "grain_eval_files": validation_glob or "",
            "train_data_columns": ["tokens"], "eval_data_columns": ["tokens"],
            "tokenize_train_data": False, "tokenize_eval_data": False,
            # rows are whole documents: concatenate and split into seq_len sequences
            "grain_packing_type": "concat_then_split", "max_target_length": recipe.seq_len,
            "tokenizer_type": "huggingface", "tokenizer_path": tokenizer_uri,
        },
    }


def mixture_data_version(staged: StagedOutput, info: dict) -> str:
    """Content hash that does not depend on the storage root (mixture.json holds absolute URIs)."""
    portable = ("mixture.json (portable)", hash_json({k: v for k, v in info.items() if k not in URI_FIELDS}))
    shards = [rel for rel in staged.storage.list_files_at(staged.path) if rel != MIXTURE_FILE]
    return combine_hashes([portable, *file_hashes(staged.path, shards)])
