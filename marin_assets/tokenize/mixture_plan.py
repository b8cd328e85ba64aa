"""Plan a mixture (pure, bounded): which documents go to train and validation, how often each repeats.

* Validation membership depends only on (source, document id) and the fraction, so adding,
  removing or reweighting a source never moves a document between train and validation.
* Train tokens per source = weight x total. A source with fewer train tokens is repeated
  (`upsample`, the epoch count is recorded) or refused (`fail`); one with more is subsampled.
  After whole passes, the rest comes from the train documents of smallest seeded subset key
  (mixture_keys), as many as bring the tokens closest to the target: whole documents, so the realised
  weight differs slightly from the target; both are reported, computed exactly from streamed sums.
* Memory: the plan is a cut per source (`Take`), not rows. Sources are read in chunks of
  recipe.plan_memory_documents; the cut is found with a histogram of tokens over key buckets, then
  a pass that sorts only the documents of the bucket the cut falls in.
* Every random choice comes from the recipe seed: same recipe + inputs -> same plan.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from marin_assets.tokenize.mixture_keys import (
    BUCKET_BITS, BUCKETS, SourceDocuments, document_hashes, subset_keys, units, validation_mask,
)
from marin_assets.tokenize.tokenize_recipe import InsufficientTokens, MixtureRecipe

MAX_DOCUMENTS = 2**31 - 1  # the writer stores document indices as int32

__all__ = ["MixtureError", "MixturePlan", "SourceDocuments", "SourcePlan", "Take", "plan_mixture"]


class MixtureError(ValueError):
    pass


@dataclass(frozen=True)
class SourcePlan:
    name: str
    target_weight: float
    realised_weight: float
    epochs: float           # train tokens taken / train tokens available
    train_tokens: int
    validation_tokens: int
    train_documents: int    # rows written, repeats counted
    validation_documents: int
    available_train_tokens: int


@dataclass(frozen=True)
class Take:
    """Every train document `passes` times, then once more those whose (subset key, index) come before the
    cut (or equal it, when inclusive). cut None: no partial pass."""

    passes: int
    cut: tuple[int, int, bool] | None = None

    def subset(self, keys: np.ndarray, indices: np.ndarray) -> np.ndarray:
        if self.cut is None:
            return np.zeros(keys.size, dtype=bool)
        key, index, inclusive = np.uint64(self.cut[0]), self.cut[1], self.cut[2]
        at = (keys == key) & ((indices < index) | ((indices == index) & inclusive))
        return (keys < key) | at


@dataclass
class MixturePlan:
    sources: dict[str, SourcePlan]
    takes: dict[str, Take]
    seed: int
    validation_fraction: float
    train_documents: int
    validation_documents: int
    train_tokens: int
    validation_tokens: int
    max_document_tokens: int
    chunk: int  # documents read at once (recipe.plan_memory_documents)
    warnings: list[str] = field(default_factory=list)

    def train_chunks(self, docs) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
        """(pass, document indices, hashes, lengths) of a source's train rows, at most `chunk` rows at a time."""
        take = self.takes[docs.name]
        for first, hashes, lengths in docs.chunks(self.chunk):
            train = ~validation_mask(hashes, self.validation_fraction)
            indices, hashes, lengths = np.flatnonzero(train) + first, hashes[train], lengths[train]
            for p in range(take.passes):
                yield p, indices, hashes, lengths
            chosen = take.subset(subset_keys(hashes, self.seed), indices)
            if chosen.any():
                yield take.passes, indices[chosen], hashes[chosen], lengths[chosen]

    def validation_chunks(self, docs) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(document indices, lengths) of a source's validation documents, in document order."""
        for first, hashes, lengths in docs.chunks(self.chunk):
            held = validation_mask(hashes, self.validation_fraction)
            if held.any():
                yield np.flatnonzero(held) + first, lengths[held]


def split_units(source: str, ids: list[str]) -> np.ndarray:
    """sha256(source, id) mapped to [0, 1): a document is in validation when its unit is below the fraction."""
    return units(document_hashes(source, ids))


def in_validation(source: str, ids: list[str], fraction: float) -> np.ndarray:
    """Stable per-document split: depends only on (source, id) and the fraction."""
    return validation_mask(document_hashes(source, ids), fraction)


def _total_train_tokens(recipe: MixtureRecipe, available: dict[str, int]) -> int:
    if recipe.train_tokens is not None:
        return recipe.train_tokens
    # epochs: the largest total in which no source repeats more than `epochs` times.
    return int(min(available[n] * recipe.epochs / w for n, w in recipe.weights.items()))


@dataclass
class _Counts:
    documents: int = 0
    train_documents: int = 0
    available: int = 0
    validation_documents: int = 0
    validation_tokens: int = 0
    longest: int = 0


def _count(docs, fraction: float, chunk: int) -> _Counts:
    counts = _Counts()
    for _, hashes, lengths in docs.chunks(chunk):
        held = validation_mask(hashes, fraction)
        counts.documents += lengths.size
        counts.train_documents += int((~held).sum())
        counts.available += int(lengths[~held].sum())
        counts.validation_documents += int(held.sum())
        counts.validation_tokens += int(lengths[held].sum())
        counts.longest = max(counts.longest, int(lengths.max(initial=0)))
    return counts


def _find_take(docs, target: int, available: int, train_documents: int, recipe: MixtureRecipe) -> tuple[Take, int, int]:
    """The Take of a source and its (tokens, rows): whole passes, then the subset whose tokens come closest to
    the rest. Narrows a key range [lo, lo + width) by BUCKETS buckets until the one holding the cut has at most
    plan_memory_documents documents, then sorts that bucket's documents by (key, index)."""
    passes, remainder = divmod(target, available)
    if remainder == 0:
        return Take(passes), passes * available, passes * train_documents
    chunk, before_tokens, before_documents = recipe.plan_memory_documents, 0, 0
    lo, width, shift = 0, 2**64, 64 - BUCKET_BITS  # keys in [lo, lo + width), bucket (key - lo) >> shift
    while True:
        tokens, counts = np.zeros(BUCKETS, np.int64), np.zeros(BUCKETS, np.int64)
        for _, keys, lengths, _ in _train_keys(docs, recipe, chunk, lo, width):
            bucket = ((keys - np.uint64(lo)) >> np.uint64(shift)).astype(np.int64)
            tokens += np.bincount(bucket, weights=lengths, minlength=BUCKETS).astype(np.int64)
            counts += np.bincount(bucket, minlength=BUCKETS)
        cumulative = np.cumsum(tokens)
        b = int(np.searchsorted(cumulative, remainder - before_tokens))  # first bucket reaching the rest
        before_tokens += int(cumulative[b - 1]) if b else 0
        before_documents += int(counts[:b].sum())
        lo, width = lo + (b << shift), 1 << shift
        if counts[b] <= chunk or shift == 0:
            break
        shift = max(0, shift - BUCKET_BITS)
    parts = [(k, lengths, i) for _, k, lengths, i in _train_keys(docs, recipe, chunk, lo, width)]
    keys, lengths, indices = (np.concatenate([p[j] for p in parts]) for j in range(3))
    order = np.lexsort((indices, keys))
    cumulative = before_tokens + np.cumsum(lengths[order])
    k = int(np.searchsorted(cumulative, remainder))  # the first document whose prefix reaches the rest
    below = int(cumulative[k - 1]) if k else before_tokens
    inclusive = bool(cumulative[k] - remainder < remainder - below)
    taken_tokens = int(cumulative[k]) if inclusive else below
    cut = (int(keys[order[k]]), int(indices[order[k]]), inclusive)
    taken_documents = before_documents + k + inclusive
    return Take(passes, cut), passes * available + taken_tokens, passes * train_documents + taken_documents


def _train_keys(docs, recipe: MixtureRecipe, chunk: int, lo: int, width: int):
    """(first, subset keys, lengths, indices) of the train documents with keys in [lo, lo + width), chunk by chunk."""
    for first, hashes, lengths in docs.chunks(chunk):
        train = ~validation_mask(hashes, recipe.validation_fraction)
        keys = subset_keys(hashes[train], recipe.seed)
        inside = keys >= np.uint64(lo)
        if lo + width < 2**64:
            inside &= keys < np.uint64(lo + width)
        yield first, keys[inside], lengths[train][inside], (np.flatnonzero(train) + first)[inside]


def check_sources_known(recipe: MixtureRecipe, known_sources: list[str]) -> None:
    unknown = sorted(set(recipe.weights) - set(known_sources))
    if unknown:
        raise MixtureError(f"unknown sources {unknown}; known sources: {sorted(known_sources)}")


def plan_mixture(recipe: MixtureRecipe, documents: list, known_sources: list[str]) -> MixturePlan:
    """documents: per source a SourceDocuments or DocumentFile (name, size, chunks(n))."""
    check_sources_known(recipe, known_sources)
    by_name = {d.name: d for d in documents}
    names = sorted(recipe.weights)
    missing = [n for n in names if n not in by_name]
    if missing:
        raise MixtureError(f"no tokenized documents given for sources {missing}")

    chunk, counts = recipe.plan_memory_documents, {}
    for name in names:
        if by_name[name].size > MAX_DOCUMENTS:
            raise MixtureError(f"source {name!r} has {by_name[name].size} documents, more than {MAX_DOCUMENTS}")
        counts[name] = _count(by_name[name], recipe.validation_fraction, chunk)
        if counts[name].available == 0:
            raise MixtureError(f"source {name!r} is empty: {counts[name].documents} documents, 0 training tokens")

    total = _total_train_tokens(recipe, {n: c.available for n, c in counts.items()})
    plans, takes, warnings = {}, {}, []
    for name in names:
        c = counts[name]
        target = round(recipe.weights[name] * total)
        needed = target / c.available
        if needed > 1 and recipe.on_insufficient_tokens == InsufficientTokens.FAIL:
            raise MixtureError(f"source {name!r} has {c.available} training tokens but its weight "
                               f"{recipe.weights[name]} demands {target} (on_insufficient_tokens: fail)")
        if needed > recipe.max_epochs:
            raise MixtureError(f"source {name!r} would repeat {needed:.1f} times (> max_epochs "
                               f"{recipe.max_epochs}): {c.available} training tokens for a target of {target}")
        take = _find_take(by_name[name], target, c.available, c.train_documents, recipe)
        takes[name], taken_tokens, taken_rows = take
        if needed > 1:
            warnings.append(f"source {name!r} is upsampled {needed:.2f}x to reach {target} training tokens")
        if recipe.validation_fraction > 0 and c.validation_documents == 0:
            warnings.append(f"source {name!r} has no validation documents (too few documents for the fraction)")
        plans[name] = SourcePlan(
            name=name, target_weight=recipe.weights[name], realised_weight=0.0,
            epochs=round(taken_tokens / c.available, 4), train_tokens=taken_tokens,
            validation_tokens=c.validation_tokens, train_documents=taken_rows,
            validation_documents=c.validation_documents, available_train_tokens=c.available,
        )
    train_tokens = sum(p.train_tokens for p in plans.values())
    plans = {n: _with_realised_weight(p, train_tokens) for n, p in plans.items()}
    validation_tokens = sum(p.validation_tokens for p in plans.values())
    longest = max(c.longest for c in counts.values())
    _check_sequence_fit(recipe, train_tokens, validation_tokens, longest, warnings)
    return MixturePlan(plans, takes, recipe.seed, recipe.validation_fraction,
                       sum(p.train_documents for p in plans.values()),
                       sum(p.validation_documents for p in plans.values()),
                       train_tokens, validation_tokens, longest, chunk, warnings)  # fmt: skip


def _with_realised_weight(plan: SourcePlan, train_tokens: int) -> SourcePlan:
    return SourcePlan(**{**plan.__dict__, "realised_weight": round(plan.train_tokens / train_tokens, 6)})


def _check_sequence_fit(recipe: MixtureRecipe, train_tokens: int, validation_tokens: int,
                        longest: int, warnings: list[str]) -> None:
    if train_tokens < recipe.seq_len:
        raise MixtureError(f"the train split has {train_tokens} tokens, fewer than one sequence of {recipe.seq_len}")
    if recipe.validation_fraction > 0 and validation_tokens < recipe.seq_len:
        raise MixtureError(f"the validation split has {validation_tokens} tokens, fewer than one sequence of "
                           f"{recipe.seq_len}; raise validation_fraction or add documents")
    if recipe.seq_len > longest:
        warnings.append(f"seq_len {recipe.seq_len} exceeds every document (longest: {longest} tokens); documents "
                        "are packed end to end (grain_packing_type=concat_then_split), so each sequence spans "
                        "several documents")
