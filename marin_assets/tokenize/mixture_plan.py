"""Plan a mixture (pure): which documents go to train and validation, how often each repeats.

* Validation membership depends only on (source, document id) and the fraction, so adding,
  removing or reweighting a source never moves a document between train and validation.
* Train tokens per source = weight x total. A source with fewer train tokens is repeated
  (`upsample`, the epoch count is recorded) or refused (`fail`); one with more is subsampled.
  Whole documents are taken, so the realised weight differs slightly from the target; both are reported.
* Every random choice comes from the recipe seed: same recipe + inputs -> same plan.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from marin_assets.tokenize.recipes import InsufficientTokens, MixtureRecipe


class MixtureError(ValueError):
    pass


# Plan rows are int32: the planner holds a few arrays of one entry a planned document, and at 1M documents
# int64 rows and their temporaries were ~100 MB of driver memory. A source has fewer than 2**31 documents.
ROW_DTYPE = np.int32
MAX_DOCUMENTS = 2**31 - 1


@dataclass(frozen=True)
class SourceDocuments:
    """One source as the planner sees it: per document a split value and a length, never its id
    (a million ids as Python strings would be ~100 MB of driver memory; these are 16 bytes a document)."""

    name: str
    units: np.ndarray    # split_units(name, ids): the document's stable value in [0, 1)
    lengths: np.ndarray  # tokens per document (BOS/EOS included)

    @classmethod
    def from_ids(cls, name: str, ids: list[str], lengths) -> SourceDocuments:
        return cls(name, split_units(name, ids), np.asarray(lengths, dtype=np.int64))


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


@dataclass
class MixturePlan:
    sources: dict[str, SourcePlan]
    train_rows: np.ndarray        # (n, 2): (source index, document index) in training order
    validation_rows: np.ndarray   # (m, 2)
    train_tokens: int
    validation_tokens: int
    max_document_tokens: int
    warnings: list[str] = field(default_factory=list)


def split_units(source: str, ids: list[str]) -> np.ndarray:
    """sha256(source, id) mapped to [0, 1): a document is in validation when its unit is below the fraction."""
    unit = [int.from_bytes(hashlib.sha256(f"{source}\0{i}".encode()).digest()[:8]) / 2**64 for i in ids]
    return np.asarray(unit, dtype=np.float64)


def in_validation(source: str, ids: list[str], fraction: float) -> np.ndarray:
    """Stable per-document split: depends only on (source, id) and the fraction."""
    return _validation_mask(split_units(source, ids), fraction)


def _validation_mask(units: np.ndarray, fraction: float) -> np.ndarray:
    return units < fraction if fraction > 0 else np.zeros(units.size, dtype=bool)


def _rng(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng([seed, int.from_bytes(hashlib.sha256(name.encode()).digest()[:8])])


def _total_train_tokens(recipe: MixtureRecipe, available: dict[str, int]) -> int:
    if recipe.train_tokens is not None:
        return recipe.train_tokens
    # epochs: the largest total in which no source repeats more than `epochs` times.
    return int(min(available[n] * recipe.epochs / w for n, w in recipe.weights.items()))


def _take(train_idx: np.ndarray, lengths: np.ndarray, target: int, rng: np.random.Generator) -> np.ndarray:
    """Whole passes over the train documents, then a seeded subset whose tokens come closest to the rest."""
    available = int(lengths[train_idx].sum())
    passes, remainder = divmod(target, available)
    order = rng.permutation(train_idx)
    cumulative = np.cumsum(lengths[order])
    k = int(np.searchsorted(cumulative, remainder))  # first k whose prefix order[:k+1] reaches the rest
    below = int(cumulative[k - 1]) if k > 0 else 0
    if k < len(order) and cumulative[k] - remainder < remainder - below:
        k += 1
    del cumulative
    return np.concatenate([np.tile(train_idx, passes), order[:k]])


def _rows(index: int, documents: np.ndarray) -> np.ndarray:
    """(source index, document index) rows of one source, ROW_DTYPE."""
    rows = np.empty((documents.size, 2), dtype=ROW_DTYPE)
    rows[:, 0], rows[:, 1] = index, documents
    return rows


def check_sources_known(recipe: MixtureRecipe, known_sources: list[str]) -> None:
    unknown = sorted(set(recipe.weights) - set(known_sources))
    if unknown:
        raise MixtureError(f"unknown sources {unknown}; known sources: {sorted(known_sources)}")


def plan_mixture(recipe: MixtureRecipe, documents: list[SourceDocuments], known_sources: list[str]) -> MixturePlan:
    check_sources_known(recipe, known_sources)
    by_name = {d.name: d for d in documents}
    names = sorted(recipe.weights)
    missing = [n for n in names if n not in by_name]
    if missing:
        raise MixtureError(f"no tokenized documents given for sources {missing}")

    splits, available = {}, {}
    for name in names:
        docs = by_name[name]
        if docs.lengths.size > MAX_DOCUMENTS:
            raise MixtureError(f"source {name!r} has {docs.lengths.size} documents, more than {MAX_DOCUMENTS}")
        validation = _validation_mask(docs.units, recipe.validation_fraction)
        splits[name] = (np.flatnonzero(~validation).astype(ROW_DTYPE), np.flatnonzero(validation).astype(ROW_DTYPE))
        del validation
        available[name] = int(docs.lengths[splits[name][0]].sum())
        if available[name] == 0:
            raise MixtureError(f"source {name!r} is empty: {docs.lengths.size} documents, 0 training tokens")

    total = _total_train_tokens(recipe, available)
    plans, train_parts, validation_parts, warnings = {}, [], [], []
    for index, name in enumerate(names):
        docs, (train_idx, val_idx) = by_name[name], splits[name]
        target = round(recipe.weights[name] * total)
        needed = target / available[name]
        if needed > 1 and recipe.on_insufficient_tokens == InsufficientTokens.FAIL:
            raise MixtureError(f"source {name!r} has {available[name]} training tokens but its weight "
                               f"{recipe.weights[name]} demands {target} (on_insufficient_tokens: fail)")
        if needed > recipe.max_epochs:
            raise MixtureError(f"source {name!r} would repeat {needed:.1f} times (> max_epochs "
                               f"{recipe.max_epochs}): {available[name]} training tokens for a target of {target}")
        taken = _take(train_idx, docs.lengths, target, _rng(recipe.seed, name))
        if needed > 1:
            warnings.append(f"source {name!r} is upsampled {needed:.2f}x to reach {target} training tokens")
        if recipe.validation_fraction > 0 and val_idx.size == 0:
            warnings.append(f"source {name!r} has no validation documents (too few documents for the fraction)")
        taken_tokens = int(docs.lengths[taken].sum())
        train_parts.append(_rows(index, taken))
        validation_parts.append(_rows(index, val_idx))
        plans[name] = SourcePlan(
            name=name, target_weight=recipe.weights[name], realised_weight=0.0,
            epochs=round(taken_tokens / available[name], 4),
            train_tokens=taken_tokens, validation_tokens=int(docs.lengths[val_idx].sum()),
            train_documents=int(taken.size), validation_documents=int(val_idx.size),
            available_train_tokens=available[name],
        )
    train_tokens = sum(p.train_tokens for p in plans.values())
    plans = {n: _with_realised_weight(p, train_tokens) for n, p in plans.items()}
    train_rows = np.concatenate(train_parts) if len(train_parts) > 1 else train_parts[0]
    del train_parts, taken  # the last source's copy: the shuffled rows below are the only one kept
    train_rows = train_rows[_rng(recipe.seed, "mixture-order").permutation(len(train_rows))]
    validation_rows = np.concatenate(validation_parts)
    validation_tokens = sum(p.validation_tokens for p in plans.values())
    longest = max(int(by_name[n].lengths.max(initial=0)) for n in names)
    _check_sequence_fit(recipe, train_tokens, validation_tokens, longest, warnings)
    return MixturePlan(plans, train_rows, validation_rows, train_tokens, validation_tokens, longest, warnings)


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
