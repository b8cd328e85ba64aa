"""Build a mixture: read tokenized sources, plan (mixture_plan), write train/validation shards + mixture.json."""

from __future__ import annotations

import posixpath

import numpy as np
import pyarrow as pa

from marin_assets.core import layout
from marin_assets.core.hashing import combine_hashes, hash_json
from marin_assets.core.storage import StagedOutput, Storage, file_hashes
from marin_assets.tokenize.mixture_info import MIXTURE_FILE, check_same_tokenizer
from marin_assets.tokenize.mixture_plan import MixturePlan, SourceDocuments, check_sources_known, plan_mixture
from marin_assets.tokenize.recipes import MixtureRecipe
from marin_assets.tokenize.shards import (
    SHARD_PATTERN, document_lengths, read_shards, read_tokenizer_hash, shard_table, write_shard,
)
from marin_assets.tokenize.tokenize_job import STATS_FILE
from marin_assets.tokenize.tokenizer_files import TokenizerSummary

SPLITS = ("train", "validation")
URI_FIELDS = ("train_glob", "validation_glob", "tokenizer_uri", "maxtext_args")


def tokenized_shards(storage: Storage, source: str) -> list[str]:
    base = storage.require_committed(layout.TOKENIZED, source)
    return [f"{base}/{r}" for r in storage.list_files(layout.TOKENIZED, source)
            if r.startswith("shard-") and r.endswith(".parquet")]


def read_sources(storage: Storage, names: list[str], tokenizer_hash: str) -> dict[str, pa.Table]:
    """Tokenized tables of the sources, after checking every shard came from `tokenizer_hash`."""
    shard_hashes, tables = {}, {}
    for name in names:
        shards = tokenized_shards(storage, name)
        recorded = {posixpath.basename(s): read_tokenizer_hash(s) for s in shards}
        recorded[STATS_FILE] = storage.read_json(layout.TOKENIZED, name, STATS_FILE).get("tokenizer_hash")
        shard_hashes[name] = recorded
        tables[name] = read_shards(shards)
    check_same_tokenizer(shard_hashes, tokenizer_hash)
    return tables


def build_mixture(storage: Storage, name: str, recipe: MixtureRecipe, tokenizer: TokenizerSummary,
                  tokenizer_uri: str, known_sources: list[str], staged: StagedOutput) -> tuple[dict, MixturePlan]:
    check_sources_known(recipe, known_sources)
    names = sorted(recipe.weights)
    tables = read_sources(storage, names, tokenizer.hash)
    documents = [SourceDocuments(n, tables[n].column("id").to_pylist(), document_lengths(tables[n].column("tokens")))
                 for n in names]
    plan = plan_mixture(recipe, documents, known_sources)

    combined = pa.concat_tables([tables[n] for n in names]).combine_chunks()
    first_row = np.concatenate([[0], np.cumsum([tables[n].num_rows for n in names])[:-1]])
    for split, rows in zip(SPLITS, (plan.train_rows, plan.validation_rows), strict=True):
        if rows.size or split == "train":
            _write_split(combined.take(first_row[rows[:, 0]] + rows[:, 1]), staged, split,
                         recipe.documents_per_shard, tokenizer.hash)
    info = mixture_info_dict(name, recipe, plan, tokenizer, tokenizer_uri, staged.final_uri)
    staged.write_json(info, MIXTURE_FILE)
    return info, plan


def _write_split(table: pa.Table, staged: StagedOutput, split: str, rows_per_shard: int,
                 tokenizer_hash: str) -> None:
    folder = staged.join(split)
    staged.storage.fs.makedirs(folder, exist_ok=True)
    for i, start in enumerate(range(0, max(table.num_rows, 1), rows_per_shard)):
        part = table.slice(start, rows_per_shard)
        shard = shard_table(part.column("id"), part.column("source"), part.column("tokens").combine_chunks(),
                            tokenizer_hash)
        write_shard(shard, posixpath.join(folder, SHARD_PATTERN.format(i)))


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
