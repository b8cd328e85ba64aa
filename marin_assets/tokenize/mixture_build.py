"""Build a mixture: plan (mixture_plan) from ids + lengths, stream train/validation shards (mixture_stream), mixture.json.

No source is held in memory whole: planning reads ids and lengths row group by row group, writing is an
external shuffle bounded by one input and one output row group (mixture_stream). What grows with the corpus
is the plan: about 60 bytes a document at its peak (benchmarks/mixture_scale.py).
"""

from __future__ import annotations

import posixpath

from marin_assets.core import layout
from marin_assets.core.hashing import combine_hashes, hash_json
from marin_assets.core.storage import StagedOutput, Storage, file_hashes
from marin_assets.tokenize.mixture_info import MIXTURE_FILE, check_same_tokenizer
from marin_assets.tokenize.mixture_plan import MixturePlan, check_sources_known, plan_mixture
from marin_assets.tokenize.mixture_stream import source_documents, write_split
from marin_assets.tokenize.recipes import MixtureRecipe
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
    documents = [source_documents(n, shards[n]) for n in names]  # split units + lengths: no ids, no tokens
    plan = plan_mixture(recipe, documents, known_sources)
    lengths = [d.lengths for d in documents]
    del documents  # their split units are not needed to write: 8 bytes a document less while writing
    for split, rows in zip(SPLITS, (plan.train_rows, plan.validation_rows), strict=True):
        if rows.size or split == "train":
            write_split(rows, [shards[n] for n in names], lengths, staged.join(split), recipe.documents_per_shard,
                        tokenizer.hash, staged.storage.fs, write_empty=split == "train")
    info = mixture_info_dict(name, recipe, plan, tokenizer, tokenizer_uri, staged.final_uri)
    staged.write_json(info, MIXTURE_FILE)
    return info, plan


def mixture_info_dict(name: str, recipe: MixtureRecipe, plan: MixturePlan, tokenizer: TokenizerSummary,
                      tokenizer_uri: str, final_uri: str) -> dict:
    train_glob = f"{final_uri}/train/shard-*.parquet"
    validation_glob = f"{final_uri}/validation/shard-*.parquet" if plan.validation_rows.size else None
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
        "train_documents": int(len(plan.train_rows)),
        "validation_documents": int(len(plan.validation_rows)),
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
