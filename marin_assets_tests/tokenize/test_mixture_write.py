"""A whole mixture written by write_mixture (index, plan, order, shards) equals the rule done in memory,
whatever plan_memory_documents is, and its traced driver memory does not grow with the corpus."""

from __future__ import annotations

import os
import tracemalloc

import fsspec
import numpy as np
import pyarrow as pa
import pytest

from marin_assets.tokenize import shards
from marin_assets.tokenize.mixture_build import write_mixture
from marin_assets.tokenize.mixture_keys import SourceDocuments, order_keys, validation_mask
from marin_assets.tokenize.tokenize_recipe import MixtureRecipe
from marin_assets.tokenize.shards import SHARD_PATTERN, read_shards, shard_table, token_lists, write_shard
from marin_assets_tests.tokenize.test_mixture_plan import reference_rows

NAMES = ["a", "b", "c"]


def _source(root, name: str, documents: int, shard_rows: int, seed: int, high: int = 30) -> list[str]:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, high, documents)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    values = rng.integers(0, 500, int(lengths.sum())).astype(np.int32)
    table = shard_table([f"{name}-{i}" for i in range(documents)], [name] * documents,
                        token_lists(offsets, values), "h")  # fmt: skip
    os.makedirs(os.path.join(root, name))
    paths = [os.path.join(root, name, SHARD_PATTERN.format(k)) for k in range(-(-documents // shard_rows))]
    for k, path in enumerate(paths):
        write_shard(table.slice(k * shard_rows, shard_rows), path)
    return paths


def _recipe(**kw) -> MixtureRecipe:
    base = {"weights": {"a": 0.5, "b": 0.3, "c": 0.2}, "train_tokens": 40_000, "validation_fraction": 0.1,
            "documents_per_shard": 200, "seed": 5}
    return MixtureRecipe(**{**base, **kw})


def _write(root, sources, recipe, out):
    folders = {split: os.path.join(root, out, split) for split in ("train", "validation")}
    plan = write_mixture(recipe, sources, NAMES, NAMES, folders, "h", fsspec.filesystem("file"))
    return plan, {split: _files(folder) for split, folder in folders.items()}


def _files(folder):
    return {p: open(os.path.join(folder, p), "rb").read() for p in sorted(os.listdir(folder))}


def _reference(root, sources, recipe, out) -> dict:
    """The rule in memory: take the rows, sort them by (order key, source, document, pass), cut shards."""
    tables = [read_shards(paths) for paths in sources]
    docs = [SourceDocuments.from_ids(n, t.column("id").to_pylist(), shards.document_lengths(t.column("tokens")))
            for n, t in zip(NAMES, tables)]  # fmt: skip
    rows = reference_rows(recipe, docs)
    keys = [int(order_keys(docs[NAMES.index(n)].hashes[[i]], recipe.seed, p)[0]) for n, i, p, _ in rows]
    ordered = [(NAMES.index(n), i) for _, (n, i, p, _) in sorted(zip(keys, rows))]
    held = [(s, int(i)) for s, d in enumerate(docs) for i in np.flatnonzero(validation_mask(d.hashes, 0.1))]
    out_files = {}
    for split, picked in (("train", ordered), ("validation", held)):
        folder = os.path.join(root, out, split)
        os.makedirs(folder)
        for k, lo in enumerate(range(0, len(picked), recipe.documents_per_shard)):
            part = pa.concat_tables([tables[s].slice(i, 1) for s, i in picked[lo : lo + recipe.documents_per_shard]])
            write_shard(shard_table(part.column("id"), part.column("source"), part.column("tokens").combine_chunks(),
                                    "h"), os.path.join(folder, SHARD_PATTERN.format(k)))  # fmt: skip
        out_files[split] = _files(folder)
    return out_files


@pytest.mark.parametrize("train_tokens", [40_000, 3_000])
def test_shards_equal_the_in_memory_rule_whatever_the_memory_bound(tmp_path, monkeypatch, train_tokens):
    """c is upsampled at 40k tokens (repeated passes, each shuffled on its own); at 3k all are subsampled.
    plan_memory_documents 7: hundreds of spill ranges and windows; 10**6: one of each."""
    monkeypatch.setattr(shards, "ROW_GROUP_TOKENS", 2_000)  # several row groups a shard
    sizes = (("a", 2000, 0), ("b", 1200, 1), ("c", 300, 2))
    sources = [_source(tmp_path, n, size, 400, seed) for n, size, seed in sizes]
    recipe = _recipe(train_tokens=train_tokens)
    expected = _reference(tmp_path, sources, recipe, "reference")
    small_plan, small = _write(tmp_path, sources, recipe.model_copy(update={"plan_memory_documents": 7}), "small")
    large_plan, large = _write(tmp_path, sources, recipe, "large")
    assert small == large == expected
    assert small_plan.sources == large_plan.sources
    assert len(small["train"]) == -(-small_plan.train_documents // 200) and len(small["validation"]) > 1
    _, again = _write(tmp_path, sources, recipe.model_copy(update={"plan_memory_documents": 7}), "again")
    assert again == small  # same recipe + inputs -> same bytes
    _, other = _write(tmp_path, sources, recipe.model_copy(update={"seed": 6}), "other")
    assert other["train"] != small["train"] and other["validation"] == small["validation"]


def _peak(root, documents: int) -> int:
    sources = [_source(root, n, documents // 2, 5_000, seed, high=3) for n, seed in (("a", 0), ("b", 1))]
    recipe = MixtureRecipe(weights={"a": 0.6, "b": 0.4}, epochs=1.0, seq_len=4, documents_per_shard=10**6,
                           plan_memory_documents=10_000)  # fmt: skip
    folders = {split: os.path.join(root, "out", split) for split in ("train", "validation")}
    tracemalloc.start()
    try:
        write_mixture(recipe, sources, ["a", "b"], ["a", "b"], folders, "h", fsspec.filesystem("file"))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_traced_driver_memory_does_not_grow_with_the_corpus(tmp_path):
    small, large = _peak(tmp_path / "small", 20_000), _peak(tmp_path / "large", 200_000)
    assert large < 1.3 * small, (small, large)
