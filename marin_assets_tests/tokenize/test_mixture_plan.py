import hashlib

import numpy as np
import pytest

from marin_assets.core.recipes import RecipeError, load_recipe
from marin_assets.tokenize import mixture_plan
from marin_assets.tokenize.mixture_keys import subset_keys, validation_mask
from marin_assets.tokenize.mixture_plan import MixtureError, SourceDocuments, in_validation, plan_mixture
from marin_assets.tokenize.tokenize_recipe import MixtureRecipe

KNOWN = ["a", "b", "c"]


def docs(name, n, seed=0, low=20, high=300):
    rng = np.random.default_rng(seed + len(name))
    return SourceDocuments.from_ids(name, [f"{name}-{i}" for i in range(n)], rng.integers(low, high, n))


CORPUS = [docs("a", 500), docs("b", 300), docs("c", 60)]


def recipe(**kw):
    base = {"weights": {"a": 0.5, "b": 0.3, "c": 0.2}, "train_tokens": 60_000, "validation_fraction": 0.1}
    return MixtureRecipe(**{**base, **kw})


def validation_ids(plan, corpus):
    return {(d.name, f"{d.name}-{i}") for d in corpus if d.name in plan.takes  # docs() names ids so
            for indices, _ in plan.validation_chunks(d) for i in indices}


def train_rows(plan, corpus):
    """(source, document, pass, length) of every taken train row, sorted."""
    return sorted((d.name, int(i), p, int(n)) for d in corpus if d.name in plan.takes
                  for p, indices, _, lengths in plan.train_chunks(d) for i, n in zip(indices, lengths))


def train_ids(plan, corpus):
    return {(name, f"{name}-{i}") for name, i, _, _ in train_rows(plan, corpus)}


def reference_rows(recipe, corpus):
    """The rule in memory: whole passes, then the train documents in (subset key, index) order while the
    tokens come closer to the rest."""
    available = {d.name: int(d.lengths[~validation_mask(d.hashes, recipe.validation_fraction)].sum()) for d in corpus}
    total = mixture_plan._total_train_tokens(recipe, available)
    rows = []
    for d in corpus:
        if d.name not in recipe.weights:
            continue
        train = np.flatnonzero(~validation_mask(d.hashes, recipe.validation_fraction))
        passes, remainder = divmod(round(recipe.weights[d.name] * total), available[d.name])
        order = train[np.lexsort((train, subset_keys(d.hashes[train], recipe.seed)))]
        cumulative = np.cumsum(d.lengths[order])
        k = 0  # one more document while it brings the tokens strictly closer to the rest
        while k < len(order):
            below = int(cumulative[k - 1]) if k else 0
            if abs(int(cumulative[k]) - remainder) >= abs(below - remainder):
                break
            k += 1
        rows += [(d.name, int(i), p, int(d.lengths[i])) for p in range(passes) for i in train]
        rows += [(d.name, int(i), passes, int(d.lengths[i])) for i in order[:k]]
    return sorted(rows)


def test_same_recipe_and_inputs_give_the_same_plan():
    first, second = plan_mixture(recipe(), CORPUS, KNOWN), plan_mixture(recipe(), CORPUS, KNOWN)
    assert first == second and train_rows(first, CORPUS) == train_rows(second, CORPUS)
    other_seed = plan_mixture(recipe(seed=1), CORPUS, KNOWN)
    assert train_rows(first, CORPUS) != train_rows(other_seed, CORPUS)


@pytest.mark.parametrize("kwargs", [{}, {"train_tokens": 2_000}, {"train_tokens": 200_000}, {"seed": 3},
                                    {"train_tokens": None, "epochs": 1.0}, {"validation_fraction": 0.0}])
@pytest.mark.parametrize("memory", [1, 7, 10**6])
def test_the_plan_is_the_in_memory_rule_whatever_its_memory_bound(monkeypatch, kwargs, memory):
    """Also with 8 buckets a histogram (the bucket of the cut is narrowed many times before it is sorted)."""
    expected = reference_rows(recipe(**kwargs), CORPUS)
    plan = plan_mixture(recipe(**kwargs, plan_memory_documents=memory), CORPUS, KNOWN)
    assert train_rows(plan, CORPUS) == expected
    monkeypatch.setattr(mixture_plan, "BUCKET_BITS", 3)
    monkeypatch.setattr(mixture_plan, "BUCKETS", 8)
    narrowed = plan_mixture(recipe(**kwargs, plan_memory_documents=memory), CORPUS, KNOWN)
    assert narrowed.sources == plan.sources and train_rows(narrowed, CORPUS) == expected


def test_recorded_counts_are_exactly_the_rows_taken():
    plan = plan_mixture(recipe(plan_memory_documents=13), CORPUS, KNOWN)
    rows = train_rows(plan, CORPUS)
    for d in CORPUS:
        mine = [r for r in rows if r[0] == d.name]
        source = plan.sources[d.name]
        assert source.train_documents == len(mine) and source.train_tokens == sum(r[3] for r in mine)
        held = [i for indices, _ in plan.validation_chunks(d) for i in indices]
        assert source.validation_documents == len(held)
        assert source.validation_tokens == int(d.lengths[held].sum())
        assert source.realised_weight == round(source.train_tokens / plan.train_tokens, 6)
    assert plan.train_documents == len(rows) and plan.train_tokens == sum(r[3] for r in rows)


def test_upsampling_repeats_whole_passes():
    plan = plan_mixture(recipe(train_tokens=200_000), CORPUS, KNOWN)
    take = plan.takes["c"]
    assert take.passes >= 2
    per_document = {}
    for name, i, p, _ in train_rows(plan, CORPUS):
        if name == "c":
            per_document.setdefault(i, []).append(p)
    train = np.flatnonzero(~validation_mask(CORPUS[2].hashes, 0.1))
    assert sorted(per_document) == train.tolist()  # every train document, each pass once
    assert {len(p) for p in per_document.values()} <= {take.passes, take.passes + 1}
    assert all(sorted(p) == list(range(len(p))) for p in per_document.values())


def test_weights_tokens_and_epochs_are_reported():
    plan = plan_mixture(recipe(), CORPUS, KNOWN)
    assert abs(plan.train_tokens - 60_000) < 3 * 300  # whole documents: within a few documents of the target
    for name, weight in {"a": 0.5, "b": 0.3, "c": 0.2}.items():
        source = plan.sources[name]
        assert source.target_weight == weight and abs(source.realised_weight - weight) < 0.01
        assert source.epochs == pytest.approx(source.train_tokens / source.available_train_tokens, abs=1e-3)
    assert plan.sources["c"].epochs > 1  # 60 documents of ~160 tokens cannot give 12k tokens once
    assert any("'c' is upsampled" in w for w in plan.warnings)
    assert sum(p.validation_tokens for p in plan.sources.values()) == plan.validation_tokens > 0


def test_validation_split_is_stable_when_sources_are_added_or_reweighted():
    base = plan_mixture(recipe(weights={"a": 0.6, "b": 0.4}), CORPUS[:2], KNOWN)
    reweighted = plan_mixture(recipe(weights={"a": 0.2, "b": 0.8}, train_tokens=90_000, seed=7), CORPUS[:2], KNOWN)
    added = plan_mixture(recipe(), CORPUS, KNOWN)
    held_out = validation_ids(base, CORPUS[:2])
    assert held_out == validation_ids(reweighted, CORPUS[:2])
    assert held_out == {v for v in validation_ids(added, CORPUS) if v[0] != "c"}
    for plan, corpus in ((base, CORPUS[:2]), (reweighted, CORPUS[:2]), (added, CORPUS)):
        assert not validation_ids(plan, corpus) & train_ids(plan, corpus)


def test_in_validation_depends_only_on_source_and_id():
    ids = [f"d{i}" for i in range(4000)]
    mask = in_validation("s", ids, 0.1)
    assert 300 < mask.sum() < 500
    assert np.array_equal(in_validation("s", ids[::-1], 0.1)[::-1], mask)
    assert not in_validation("s", ids, 0.0).any()
    # the unit is still sha256(source \0 id)'s first 8 bytes / 2**64, as Python divides it: no document moves
    exact = [int.from_bytes(hashlib.sha256(f"s\0{i}".encode()).digest()[:8]) / 2**64 for i in ids]
    assert mixture_plan.split_units("s", ids).tolist() == exact


def test_epochs_mode_uses_the_largest_mixture_within_the_repeat_limit():
    plan = plan_mixture(recipe(train_tokens=None, epochs=1.0), CORPUS, KNOWN)
    assert max(p.epochs for p in plan.sources.values()) <= 1.0 + 1e-3
    assert plan.sources["c"].epochs == pytest.approx(1.0, abs=0.02)  # c is the binding source


def test_subsampling_takes_part_of_a_large_source():
    plan = plan_mixture(recipe(train_tokens=2_000, validation_fraction=0.0), CORPUS, KNOWN)
    assert all(p.epochs < 1 for p in plan.sources.values())
    assert plan.validation_documents == 0 and plan.validation_tokens == 0


@pytest.mark.parametrize("kwargs,message", [
    ({"weights": {"a": 0.5, "b": 0.3}}, "sum to 0.8"),
    ({"weights": {"a": 1.2, "b": -0.2}}, "must be > 0"),
    ({"epochs": 2.0}, "exactly one of train_tokens or epochs"),
    ({"weights": {}}, "at least one source"),
])
def test_bad_recipes_are_refused_by_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        recipe(**kwargs)


def test_bad_recipe_file_names_file_and_field(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("weights: {a: 0.5, b: 0.4}\ntrain_tokens: 10\n")
    with pytest.raises(RecipeError, match=r"m.yaml.*sum to 0.9"):
        load_recipe(path, MixtureRecipe)


def test_bad_inputs_give_clear_errors():
    with pytest.raises(MixtureError, match=r"unknown sources \['zz'\]; known sources"):
        plan_mixture(recipe(weights={"a": 0.5, "zz": 0.5}), CORPUS, KNOWN)
    empty = [docs("a", 500), SourceDocuments.from_ids("b", [], np.zeros(0, np.int64)), docs("c", 60)]
    with pytest.raises(MixtureError, match="source 'b' is empty"):
        plan_mixture(recipe(), empty, KNOWN)
    with pytest.raises(MixtureError, match=r"source 'c' has \d+ training tokens but its weight 0.2 demands"):
        plan_mixture(recipe(on_insufficient_tokens="fail"), CORPUS, KNOWN)
    with pytest.raises(MixtureError, match=r"'c' would repeat .* max_epochs 3"):
        plan_mixture(recipe(train_tokens=200_000, max_epochs=3), CORPUS, KNOWN)
    with pytest.raises(MixtureError, match=r"the train split has \d+ tokens, fewer than one sequence of 100000"):
        plan_mixture(recipe(seq_len=100_000), CORPUS, KNOWN)
    with pytest.raises(MixtureError, match=r"the validation split has \d+ tokens, fewer than one sequence of 4096"):
        plan_mixture(recipe(validation_fraction=0.01, seq_len=4096), CORPUS, KNOWN)


def test_seq_len_longer_than_every_document_is_a_visible_decision():
    plan = plan_mixture(recipe(seq_len=1024), CORPUS, KNOWN)
    assert plan.max_document_tokens < 1024
    assert any("seq_len 1024 exceeds every document" in w for w in plan.warnings)
    assert not any("exceeds every document" in w for w in plan_mixture(recipe(seq_len=128), CORPUS, KNOWN).warnings)
